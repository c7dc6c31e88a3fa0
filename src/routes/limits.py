"""The input limits (one source for the server's checks and the browser's forms)."""
from flask import Blueprint, Response, jsonify

from ..utils.limits import as_document

bp = Blueprint("limits", __name__)


@bp.get("/api/limits")
def get_limits() -> Response:
    """The input limits the server checks."""
    return jsonify(as_document())
