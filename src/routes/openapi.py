"""The Open API document of the JSON API (built in src/utils/openapi/)."""
from flask import Blueprint, Response, jsonify

from ..utils.openapi import build_document

bp = Blueprint("openapi", __name__)


@bp.get("/api/openapi.json")
def document() -> Response:
    """Every route, request and response of the API as Open API 3.1."""
    return jsonify(build_document())
