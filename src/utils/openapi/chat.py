"""Chat: the SSE endpoints, the event stream they share with the WebSocket, and /ws/chat (§6).

The WebSocket has no Open API operation type: `GET /ws/chat` documents the upgrade (its text is
the docstring of `routes/ws.py`), and its frames are in `x-websocket`.
"""
from pydantic import BaseModel

from ...routes import chat, messages, ws
from ..models import chat as e, conversations as c
from .table import Op, header, sse_response, websocket

_SSE: dict[str, type[BaseModel]] = {"start": e.ChatStart, "chunk": e.ChatChunk,
                                    "done": e.ChatDone, "error": e.ChatError}
_PUSHED: dict[str, type[BaseModel]] = {"cortex": e.CortexEvent, "title": e.TitleEvent,
                                       "subscribed": e.SubscribedEvent, "idle": e.IdleEvent}
_CLIENT = (e.ChatFrame, e.RegenerateFrame, e.ContinueFrame, e.ResumeFrame, e.StopFrame,
           e.SubscribeFrame)
_STREAM = sse_response(
    "`text/event-stream`: `start`, then `chunk`s, then `done` or `error` (`event: <type>` / "
    "`data: <json>`). Failures after the stream started arrive as an `error` event, never as an "
    "HTTP status. Each event has an `id: <reply_id>:<offset>` (characters of the reply sent so "
    "far): after a lost connection, `GET /api/sessions/{sid}/stream` with `Last-Event-ID` sends "
    "exactly the rest. Disconnecting does not stop the reply.", _SSE)
_LAST_EVENT = header("Last-Event-ID", "`<reply_id>:<offset>` from the last event received; any "
                     "other value counts as absent.")
ROUTES = {"chat": (
    Op(chat.stream, _STREAM, c.ChatMessage, "400 404 409"),
    Op(messages.regenerate, _STREAM, c.ReplyTarget, "400 404 409"),
    Op(messages.continue_reply, _STREAM, c.ContinueTarget, "400 404 409"),
    Op(messages.resume, _STREAM, errors="400 404", params=(_LAST_EVENT,),
       more={"204": {"description": "No reply is being generated."}}),
    Op(messages.stop, e.Stopped, c.NoFields, "400 404"),
    Op(ws, {"description": "Switching Protocols: the WebSocket is open."}, errors="400 403",
       status="101", method="get", path="/ws/chat", extra={"x-websocket": websocket(
           "/ws/chat", "One JSON object per text frame.", _CLIENT, {**_SSE, **_PUSHED})}),
)}
