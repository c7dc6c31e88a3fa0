"""Personas over REST (DESIGN §7): thin views over PersonaService."""
from flask import Blueprint, Response, jsonify

from ..utils.provider import get_persona_service
from .errors import json_body
from .guards import deleted, persona_id

bp = Blueprint("personas", __name__, url_prefix="/api/personas")


@bp.get("")
def list_personas() -> Response:
    """All personas, the default one first."""
    return jsonify({"personas": [p.model_dump(mode="json") for p in get_persona_service().list()]})


@bp.post("")
def create_persona() -> tuple[Response, int]:
    """Create a persona (its cortex files come from the templates)."""
    return jsonify(get_persona_service().create(json_body()).model_dump(mode="json")), 201


@bp.get("/<pid>")
def get_persona(pid: str) -> Response:
    """One persona."""
    return jsonify(get_persona_service().get(persona_id(pid)).model_dump(mode="json"))


@bp.put("/<pid>")
def update_persona(pid: str) -> Response:
    """Change the fields given."""
    pid = persona_id(pid)
    return jsonify(get_persona_service().update(pid, json_body()).model_dump(mode="json"))


@bp.delete("/<pid>")
def delete_persona(pid: str) -> Response:
    """Delete a persona with its sessions, messages, cortex files and revisions.

    The default persona cannot be deleted (`409 default_persona`). The request has no body (or a
    JSON one).
    """
    return deleted(get_persona_service().delete, persona_id(pid))
