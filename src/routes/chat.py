"""Chat over Server-Sent Events for REST clients; the browser uses the WebSocket (routes/ws.py).

Requests that are wrong before a reply starts get a JSON 4xx; once the stream runs, failures
arrive as an `error` event in it. A client that disconnects only stops following: the reply is
generated to its end and can be resumed (`GET /api/sessions/<sid>/stream`).
"""
from flask import Blueprint, Response

from ..utils.models.conversations import ChatMessage
from ..utils.provider import get_chat_service
from .errors import body
from .streaming import reply_response

bp = Blueprint("chat", __name__)


@bp.post("/api/chat/stream")
def stream() -> Response:
    """Send a message and stream the reply (SSE).

    The user message and the reply are stored from the start (the reply as `streaming`, its text
    flushed while it grows). A client that disconnects only stops following: resume with `GET
    /api/sessions/{sid}/stream`; stop with `POST …/stop`.
    """
    given = body(ChatMessage)
    return reply_response(get_chat_service().start_chat(given.session_id, given.message))
