"""Replies over REST (§7, §13): regenerate, continue, resume, stop, and the classic "last" edits.

Regenerate and continue stream like `POST /api/chat/stream` (their body is JSON, so a form on
another site cannot start them). `GET /api/sessions/<sid>/stream` follows the reply being
generated (from any worker process); with `Last-Event-ID` it sends only what the client has not
seen; `204` when there is nothing to follow. Editing the last message makes a new branch (the
client then regenerates); deleting removes the last exchange. Both answer with the session as
`GET /api/sessions/<sid>` does (plus the edited `message`, or the `deleted_ids`).
"""
from flask import Blueprint, Response, jsonify, request

from ..utils.models.conversations import ContinueTarget, MessageEdit, NoFields, ReplyTarget
from ..utils.provider import get_chat_service, get_prompt_inspector, get_session_service
from .errors import body
from .guards import no_body_or_json, session_id
from .streaming import parse_event_id, reply_response, sse_response

bp = Blueprint("messages", __name__, url_prefix="/api/sessions")


@bp.post("/<sid>/regenerate")
def regenerate(sid: str) -> Response:
    """A new reply to the end of the active branch (or to `message_id`) as an SSE stream; earlier
    replies stay as alternatives."""
    sid = session_id(sid)
    target = body(ReplyTarget)
    return reply_response(get_chat_service().start_regenerate(sid, target.message_id))


@bp.post("/<sid>/continue")
def continue_reply(sid: str) -> Response:
    """Let the model continue a reply from its text (SSE).

    Only the last reply of a branch (`409 not_last`) with some text (`409 nothing_to_continue`). The
    stream's chunks are the new text; `done.text` is the whole reply.
    """
    sid = session_id(sid)
    target = body(ContinueTarget)
    return reply_response(get_chat_service().start_continue(sid, target.message_id))


@bp.get("/<sid>/stream")
def resume(sid: str) -> Response | tuple[str, int]:
    """Follow the reply being generated (SSE, resumable).

    Without `Last-Event-ID`: `start`, the text so far as one chunk, then live chunks and `done`.
    With the `id` of the last event received: only the rest (also after the reply finished). Works
    from every worker process.
    """
    sid = session_id(sid)
    last = parse_event_id(request.headers.get("Last-Event-ID"))
    reply_id, offset = last or (None, None)
    events = get_chat_service().resume(sid, offset, reply_id)
    if events is None:
        return "", 204
    return sse_response(events, reply_id, offset or 0, greet=True)


@bp.post("/<sid>/stop")
def stop(sid: str) -> Response:
    """Stop the reply being generated in the session.

    The reply ends with `done` (`stop_reason: cancelled`) and is kept, marked incomplete, in
    whichever process generates it.
    """
    sid = session_id(sid)
    body(NoFields)
    return jsonify({"session_id": sid, "stopped": get_chat_service().stop(sid)})


@bp.get("/<sid>/messages/<int:mid>")
def read_message(sid: str, mid: int) -> Response:
    """One message with its memory provenance."""
    return jsonify(get_session_service().message(session_id(sid), mid).answer())


@bp.get("/<sid>/messages/<int:mid>/prompt")
def read_prompt(sid: str, mid: int) -> Response:
    """The request a reply was generated from.

    `400 not_a_reply` for a person's message; `404` for an unknown session or a message of another
    session.
    """
    return jsonify(get_prompt_inspector().inspect(session_id(sid), mid))


@bp.get("/<sid>/context")
def read_context(sid: str) -> Response:
    """How full the context window was with the last request of the active branch."""
    return jsonify(get_prompt_inspector().context(session_id(sid)))


@bp.put("/<sid>/messages/last")
def edit_last(sid: str) -> Response:
    """Edit the active branch's last user message: a new sibling and branch (the old one is kept);
    then regenerate for its reply."""
    sid = session_id(sid)
    edited = get_chat_service().edit_last(sid, body(MessageEdit).content)
    return jsonify({**get_session_service().get(sid), "message": edited.answer()})


@bp.delete("/<sid>/messages/last")
def delete_last(sid: str) -> Response:
    """Delete the last exchange (the active branch's last user message and everything below it,
    alternatives included)."""
    sid = session_id(sid)
    no_body_or_json()
    deleted = get_chat_service().delete_last(sid)
    return jsonify({**get_session_service().get(sid), "deleted_ids": deleted})

