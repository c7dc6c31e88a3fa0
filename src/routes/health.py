"""Liveness probe."""
from flask import Blueprint, Response, jsonify

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """Liveness probe (needs no access token)."""
    return jsonify({"status": "ok"})
