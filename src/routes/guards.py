"""Checks shared by the JSON API blueprints: id shapes and body rules."""
from collections.abc import Callable

from flask import Response, jsonify, request

from ..utils.provider import get_cortex_service
from ..utils.services.ids import is_persona_id, is_session_id
from .errors import ApiError, json_body


def persona_id(value: str) -> str:
    """`value` if it can be a persona id; 404 before any lookup or path otherwise."""
    if not is_persona_id(value):
        raise ApiError(404, "persona_not_found", "No persona with that id.")
    return value


def existing_persona(value: str) -> str:
    """`value` if it names an existing persona; 404 `persona_not_found` otherwise."""
    return get_cortex_service().require_persona(persona_id(value))


def session_id(value: str) -> str:
    """`value` if it can be a session id; 404 otherwise."""
    if not is_session_id(value):
        raise ApiError(404, "session_not_found", "No session with that id.")
    return value


def no_body_or_json() -> None:
    """For DELETE: no body at all, or a JSON one; a form or text body is refused (415)."""
    if request.get_data(cache=True):
        json_body()


def deleted(delete: Callable[[str], object], item_id: str) -> Response:
    """A DELETE by id: checks the body as `no_body_or_json` does, runs `delete(item_id)` and
    answers `{"id", "deleted": true}`."""
    no_body_or_json()
    delete(item_id)
    return jsonify({"id": item_id, "deleted": True})
