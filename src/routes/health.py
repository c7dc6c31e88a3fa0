"""Liveness probe."""
from flask import Blueprint, jsonify

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """Answers 200 while the app can serve requests."""
    return jsonify({"status": "ok"})
