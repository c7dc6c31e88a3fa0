"""Settings and the API key over REST (DESIGN §7); the key itself is never returned."""
from flask import Blueprint, Response, jsonify, request

from ..utils.provider import get_connection_tester, get_settings_service
from .errors import json_body
from .guards import no_body_or_json

bp = Blueprint("settings", __name__, url_prefix="/api/settings")


@bp.get("")
def get_settings() -> Response:
    """The settings and the API key status."""
    return jsonify(get_settings_service().get().model_dump(mode="json"))


@bp.put("")
def update_settings() -> Response:
    """Change any of the settings."""
    return jsonify(get_settings_service().update(json_body()).model_dump(mode="json"))


@bp.put("/api-key")
def set_api_key() -> Response:
    """Check a key with one small upstream call, then store it."""
    status = get_settings_service().set_api_key(json_body())
    return jsonify({"api_key": status.model_dump(mode="json")})


@bp.delete("/api-key")
def delete_api_key() -> Response:
    """Remove the stored key (the environment's key applies again)."""
    no_body_or_json()
    status = get_settings_service().delete_api_key(request.args.get("provider"))
    return jsonify({"api_key": status.model_dump(mode="json")})


@bp.post("/test-connection")
def test_connection() -> Response:
    """Probe an endpoint: reachable, models, tool calls, context window."""
    return jsonify(get_connection_tester().run(json_body()))


@bp.get("/models")
def list_models() -> Response:
    """The models the saved endpoint lists (`/models`)."""
    return jsonify(get_connection_tester().models(request.args.get("provider")))
