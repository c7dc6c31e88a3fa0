"""Chat: the SSE endpoints, the event stream they share with the WebSocket, and /ws/chat (§6).

An SSE response is described per event, the Open API 3.2 way (`event` + `data` carrying JSON
by `contentMediaType`/`contentSchema`); 3.1 tools read it as the schema of one event.
The WebSocket has no Open API operation type: `GET /ws/chat` documents the upgrade, and its
frames are in `x-websocket`.
"""
from pydantic import BaseModel

from ..models import chat as events
from ..models.conversations import ChatMessage, ContinueTarget, NoFields, ReplyTarget
from ...routes import chat, messages
from .table import Op, model_ref, untitled

_SSE: dict[str, type[BaseModel]] = {"start": events.ChatStart, "chunk": events.ChatChunk, "done": events.ChatDone,
        "error": events.ChatError}
_PUSHED: dict[str, type[BaseModel]] = {"cortex": events.CortexEvent, "title": events.TitleEvent,
           "subscribed": events.SubscribedEvent, "idle": events.IdleEvent}
_FRAMES = (events.ChatFrame, events.RegenerateFrame, events.ContinueFrame, events.ResumeFrame,
           events.StopFrame, events.SubscribeFrame)


def _sse_event(name: str, model: type[BaseModel]) -> dict:
    return {"type": "object", "required": ["event", "data"], "properties": {
        "event": {"const": name}, "data": {"type": "string", "contentMediaType":
                                           "application/json", "contentSchema": model_ref(model)}}}


def _frame(kind: str, model: type[BaseModel]) -> dict:
    """A server frame: `{"type": kind, ...data}`."""
    return {"allOf": [{"type": "object", "properties": {"type": {"const": kind}},
                       "required": ["type"]}, model_ref(model)]}


_STREAM = {
    "description": "`text/event-stream`: `start`, then `chunk`s, then `done` or `error` "
                   "(`event: <type>` / `data: <json>`). Failures after the stream started "
                   "arrive as an `error` event, never as an HTTP status. Each event has an "
                   "`id: <reply_id>:<offset>` (characters of the reply sent so far): after a "
                   "lost connection, `GET /api/sessions/{sid}/stream` with `Last-Event-ID` "
                   "sends exactly the rest. Disconnecting does not stop the reply.",
    "content": {"text/event-stream": {"schema": {"oneOf": [
        _sse_event(name, model) for name, model in _SSE.items()]}}},
}
_WS_TEXT = (
    "The browser's chat connection (WebSocket, RFC 6455). Client frames: `chat` starts a reply, "
    "`regenerate` adds another reply (earlier ones stay as alternatives), `continue` extends a "
    "reply, `resume` follows the reply in flight of a session (after a reload, from any tab or "
    "worker), `stop` cancels a reply (it ends with `done`, `stop_reason: cancelled`), "
    "`subscribe` follows a persona's cortex updates. Replies are generated on the server "
    "independently of the socket: closing it never stops one. Server frames: `start`, "
    "`chunk`, `done`, `error` (the SSE stream's events as `{\"type\": <event>, ...data}`), and "
    "pushed `cortex` (an update finished), `title` (a session got its generated title) and "
    "`subscribed`. One reply at a time per connection (`error` `busy` otherwise); a malformed "
    "frame gets `error` `invalid_request` and the connection stays open. Schemas: "
    "`x-websocket`.")
_WEBSOCKET = {
    "url": "/ws/chat", "frame_format": "One JSON object per text frame.",
    "client_frames": {frame.model_fields["type"].annotation.__args__[0]:  # type: ignore[union-attr]
                      untitled(frame.model_json_schema()) for frame in _FRAMES},
    "server_frames": {kind: _frame(kind, model) for kind, model in {**_SSE, **_PUSHED}.items()},
}
_SID = "/api/sessions/{sid}"
ROUTES = {"chat": (
    Op("post", "/api/chat/stream", chat.stream, _STREAM, ChatMessage, "400 404 409"),
    Op("post", _SID + "/regenerate", messages.regenerate, _STREAM, ReplyTarget, "400 404 409"),
    Op("post", _SID + "/continue", messages.continue_reply, _STREAM, ContinueTarget,
       "400 404 409"),
    Op("get", _SID + "/stream", messages.resume, _STREAM, errors="400 404",
       more={"204": {"description": "No reply is being generated."}},
       params=({"name": "Last-Event-ID", "in": "header", "required": False,
                "schema": {"type": "string"}, "description": "`<reply_id>:<offset>` from the "
                "last event received; any other value counts as absent."},)),
    Op("post", _SID + "/stop", messages.stop, events.Stopped, NoFields, "400 404"),
    Op("get", "/ws/chat", "The chat WebSocket (upgrade).", {"description": "Switching "
       "Protocols: the WebSocket is open."}, errors="400 403", status="101",
       description=_WS_TEXT, extra={"x-websocket": _WEBSOCKET}),
)}
