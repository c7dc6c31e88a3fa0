"""Personas over REST (DESIGN §7): thin views over PersonaService."""
from flask import Blueprint, jsonify

from ..utils.provider import get_persona_service
from .errors import json_body
from .guards import deleted, persona_id

bp = Blueprint("personas", __name__, url_prefix="/api/personas")


@bp.get("")
def list_personas():
    """All personas, the default one first."""
    return jsonify({"personas": get_persona_service().list()})


@bp.post("")
def create_persona():
    """Creates a persona (and its cortex); 201 with the persona."""
    return jsonify(get_persona_service().create(json_body())), 201


@bp.get("/<pid>")
def get_persona(pid: str):
    """One persona."""
    return jsonify(get_persona_service().get(persona_id(pid)))


@bp.put("/<pid>")
def update_persona(pid: str):
    """Changes the fields given in the body."""
    pid = persona_id(pid)
    return jsonify(get_persona_service().update(pid, json_body()))


@bp.delete("/<pid>")
def delete_persona(pid: str):
    """Deletes a persona with its sessions, messages and cortex (not the default one)."""
    return deleted(get_persona_service().delete, persona_id(pid))
