"""The input limits (one source for the server's checks and the browser's forms)."""
from flask import Blueprint, jsonify

from ..utils.limits import as_document

bp = Blueprint("limits", __name__)


@bp.get("/api/limits")
def get_limits():
    """Every form field's limits, as the services check them."""
    return jsonify(as_document())
