"""The end of a conversation: regenerate the last reply, edit or delete the last message (§7).

Regenerate streams like `POST /api/chat/stream` (its body is `{}`: JSON only, so a form on
another site cannot start it). Editing replaces the last user message and drops
its reply (the client then regenerates); deleting removes the last exchange, i.e. the last user
message and everything after it. Both answer with the session as `GET /api/sessions/<sid>` does
(plus the edited `message`, or the `deleted_ids`).
"""
from flask import Blueprint, jsonify

from ..utils.provider import get_chat_service, get_session_service
from ..utils.services.validation import reject_unknown
from .errors import json_body
from .guards import no_body_or_json, session_id
from .streaming import sse_response

bp = Blueprint("messages", __name__, url_prefix="/api/sessions")


@bp.post("/<sid>/regenerate")
def regenerate(sid: str):
    """Replaces the last reply (or answers an unanswered last message) as an SSE stream."""
    sid = session_id(sid)
    reject_unknown(json_body(), ())
    chat = get_chat_service()
    chat.check_regenerate(sid)
    return sse_response(chat.regenerate(sid))


@bp.put("/<sid>/messages/last")
def edit_last(sid: str):
    """Replaces the last user message's text (`{"content"}`) and removes its reply."""
    sid = session_id(sid)
    body = json_body()
    reject_unknown(body, ("content",))
    edited = get_chat_service().edit_last(sid, body.get("content"))
    return jsonify({**get_session_service().get(sid), "message": edited})


@bp.delete("/<sid>/messages/last")
def delete_last(sid: str):
    """Deletes the last exchange; the response lists the deleted ids and the session."""
    sid = session_id(sid)
    no_body_or_json()
    deleted = get_chat_service().delete_last(sid)
    return jsonify({**get_session_service().get(sid), "deleted_ids": deleted})
