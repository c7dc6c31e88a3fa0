"""Sessions over REST (DESIGN §7): thin views over SessionService.

Regenerate and edit/delete of the last message belong to the chat feature: `routes/messages.py`.
"""
import re

from flask import Blueprint, Response, jsonify, request

from ..utils.models.conversations import SessionCreate, SessionPatch
from ..utils.provider import (
    get_chat_service,
    get_session_service,
    get_user_persona_service,
)
from ..utils.services.errors import invalid
from .errors import ApiError, body
from .guards import deleted, session_id

bp = Blueprint("sessions", __name__, url_prefix="/api/sessions")
_NUMBER = re.compile(r"[0-9]{1,18}")


@bp.get("")
def list_sessions() -> Response:
    """One persona's sessions, most recently active first."""
    pid = request.args.get("persona_id")
    if not pid:
        raise ApiError(400, "missing_parameter",
                       "persona_id: is required, e.g. GET /api/sessions?persona_id=default",
                       field="persona_id")
    return jsonify({"sessions": [s.model_dump(mode="json")
                                 for s in get_session_service().list(pid)]})


@bp.post("")
def create_session() -> tuple[Response, int]:
    """Start a session with a persona."""
    given = body(SessionCreate)
    session = get_session_service().create(given.persona_id, given.greeting_index)
    return jsonify(session.model_dump(mode="json")), 201


@bp.get("/<sid>")
def get_session(sid: str) -> Response:
    """The session with one page of its active branch (oldest first)."""
    sid = session_id(sid)
    before = _number_arg("before")
    limit = _number_arg("limit")
    page = {} if limit is None else {"limit": limit}
    get_chat_service().settle(sid)
    return jsonify(get_session_service().get(sid, before, **page))


@bp.patch("/<sid>")
def rename_session(sid: str) -> Response:
    """Rename the session, pick its greeting (before the first message) or its user persona."""
    sid = session_id(sid)
    patch = body(SessionPatch)
    given = patch.model_fields_set
    if "user_persona_id" in given:
        if len(given) > 1:
            raise invalid("user_persona_id", "send it alone, not together with other fields")
        chosen = get_user_persona_service().choose_for_session(sid, patch.user_persona_id)
        return jsonify(chosen.model_dump(mode="json"))
    if "greeting_index" in given:
        if "title" in given:
            raise invalid("greeting_index", "send it alone, not together with a title")
        greeted = get_session_service().choose_greeting(sid, patch.greeting_index)
        return jsonify(greeted.model_dump(mode="json"))
    return jsonify(get_session_service().rename(sid, patch.title).model_dump(mode="json"))


@bp.get("/<sid>/memory-notes")
def memory_notes(sid: str) -> Response:
    """What memory updates took from the conversation."""
    return jsonify(get_session_service().memory_notes(session_id(sid)))


@bp.delete("/<sid>")
def delete_session(sid: str) -> Response:
    """Delete the session and its messages."""
    return deleted(get_session_service().delete, session_id(sid))


def _number_arg(name: str) -> int | None:
    value = request.args.get(name)
    if value is None:
        return None
    if not _NUMBER.fullmatch(value):
        raise invalid(name, "must be a positive integer")
    return int(value)
