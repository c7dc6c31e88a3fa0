"""Liveness probe."""
from flask import Blueprint, jsonify

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """Liveness probe (needs no access token)."""
    return jsonify({"status": "ok"})
