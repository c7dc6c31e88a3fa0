"""Chat: the SSE endpoints, the event stream they share with the WebSocket, and /ws/chat (§6).

An SSE response is described per event, the Open API 3.2 way (`event` + `data` carrying JSON
by `contentMediaType`/`contentSchema`); 3.1 tools read it as the schema of one event.
The WebSocket has no Open API operation type: `GET /ws/chat` documents the upgrade, and its
frames are in `x-websocket`.
"""
from typing import Any

from ..models.conversations import ChatMessage, ContinueTarget, NoFields, ReplyTarget
from .common import (
    PERSONA_ID,
    SESSION_ID,
    SESSION_PARAM,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    ref,
)
from .table import model_ref

MESSAGE_TEXT = ChatMessage.model_json_schema()["properties"]["message"]

_CODES = ["not_configured", "authentication_failed", "credit_balance_exhausted", "rate_limited",
          "overloaded", "timeout", "connection_error", "invalid_request", "api_error",
          "session_busy", "session_not_found", "message_not_found", "nothing_to_regenerate",
          "nothing_to_continue", "not_last", "interrupted", "internal_error", "busy"]

SCHEMAS = {
    "ChatStart": obj({"session_id": {"type": "string", "pattern": SESSION_ID},
                      "message_id": {"type": "integer", "minimum": 1,
                                     "description": "The person's message being answered."},
                      "reply_id": {"type": "integer", "minimum": 1,
                                   "description": "The reply (stored from the start, status "
                                                  "`streaming`)."}},
                     required=("session_id", "message_id", "reply_id")),
    "IdleEvent": obj({"session_id": {"type": "string"}}, required=("session_id",),
                     description="Answers `resume`: no reply is being generated."),
    "ChatChunk": obj({"text": {"type": "string"}}, required=("text",)),
    "CortexProgress": obj({
        "triggered": {"type": "boolean"}, "job_id": nullable({"type": "string"}),
        "progress": nullable({"type": "number", "minimum": 0, "maximum": 1}),
        "frequency": nullable({"type": "string"}),
        "unprocessed": {"type": "integer"}, "threshold": {"type": "integer"},
        "enabled": {"type": "boolean"},
    }, required=("triggered", "job_id", "progress", "frequency")),
    "ChatDone": obj({
        "message_id": nullable({"type": "integer"}),
        "text": {"type": "string"},
        "usage": {"type": "object"},
        "stop_reason": nullable({"type": "string"}),
        "cortex": nullable(ref("CortexProgress")),
    }, required=("message_id", "text", "usage", "stop_reason", "cortex"),
        description="`stop_reason` is `cancelled` when the reply was stopped (kept, marked "
                    "incomplete)."),
    "ChatError": obj({"code": {"type": "string", "examples": _CODES},
                      "message": {"type": "string"}, "retryable": {"type": "boolean"}},
                     required=("code", "message", "retryable")),
    "CortexEvent": obj({"job_id": nullable({"type": "string"}),
                        "persona_id": {"type": "string"},
                        "status": {"type": "string", "enum": ["done", "failed"]},
                        "files": {"type": "array", "items": {"type": "string"}},
                        "error": nullable({"type": "string"}),
                        "reason": nullable({"type": "string", "description": "The job's reason; "
                                            "`reconcile` when memory followed retracted messages."})},
                       required=("job_id", "persona_id", "status", "files", "error")),
    "TitleEvent": obj({"session_id": {"type": "string"}, "title": {"type": "string"}},
                      required=("session_id", "title")),
    "SubscribedEvent": obj({"persona_id": {"type": "string"}}, required=("persona_id",)),
}

_SSE_EVENTS = {"start": "ChatStart", "chunk": "ChatChunk", "done": "ChatDone",
               "error": "ChatError"}


def _sse_event(name: str, schema: str) -> dict:
    return obj({"event": {"const": name},
                "data": {"type": "string", "contentMediaType": "application/json",
                         "contentSchema": ref(schema)}}, required=("event", "data"))


_STREAM = {
    "description": "`text/event-stream`: `start`, then `chunk`s, then `done` or `error` "
                   "(`event: <type>` / `data: <json>`). Failures after the stream started "
                   "arrive as an `error` event, never as an HTTP status. Each event has an "
                   "`id: <reply_id>:<offset>` (characters of the reply sent so far): after a "
                   "lost connection, `GET /api/sessions/{sid}/stream` with `Last-Event-ID` "
                   "sends exactly the rest. Disconnecting does not stop the reply.",
    "content": {"text/event-stream": {
        "schema": {"oneOf": [_sse_event(name, schema) for name, schema in _SSE_EVENTS.items()]},
    }},
}


def _frame(kind: str, schema: str | None = None) -> dict:
    """A server frame: `{"type": kind, ...data}`."""
    typed = obj({"type": {"const": kind}}, required=("type",))
    return {"allOf": [typed, ref(schema)]} if schema else typed


_WEBSOCKET: Any = {  # an `x-websocket` extension, passed through **extra
    "url": "/ws/chat",
    "frame_format": "One JSON object per text frame.",
    "client_frames": {
        "chat": obj({"type": {"const": "chat"},
                     "session_id": {"type": "string", "pattern": SESSION_ID},
                     "message": MESSAGE_TEXT}, required=("type", "session_id", "message")),
        "regenerate": obj({"type": {"const": "regenerate"},
                           "session_id": {"type": "string", "pattern": SESSION_ID},
                           "message_id": {"type": "integer", "minimum": 1}},
                          required=("type",),
                          description="A new reply to `message_id` (a reply: answered again, "
                                      "kept as an alternative; a person's message: answered), "
                                      "or to the end of the session's active branch."),
        "continue": obj({"type": {"const": "continue"},
                         "message_id": {"type": "integer", "minimum": 1}},
                        required=("type", "message_id"),
                        description="The model continues the reply from its text."),
        "resume": obj({"type": {"const": "resume"},
                       "session_id": {"type": "string", "pattern": SESSION_ID}},
                      required=("type", "session_id"),
                      description="Follow the reply in flight: `start`, the text so far as "
                                  "one `chunk`, live `chunk`s, `done`; or `idle`."),
        "stop": obj({"type": {"const": "stop"},
                     "session_id": {"type": "string", "pattern": SESSION_ID}},
                    required=("type",),
                    description="Stop the reply of `session_id` (default: the one followed)."),
        "subscribe": obj({"type": {"const": "subscribe"},
                          "persona_id": {"type": "string", "pattern": PERSONA_ID}},
                         required=("type", "persona_id")),
    },
    "server_frames": {
        "start": _frame("start", "ChatStart"), "chunk": _frame("chunk", "ChatChunk"),
        "done": _frame("done", "ChatDone"), "error": _frame("error", "ChatError"),
        "cortex": _frame("cortex", "CortexEvent"), "title": _frame("title", "TitleEvent"),
        "subscribed": _frame("subscribed", "SubscribedEvent"),
        "idle": _frame("idle", "IdleEvent"),
    },
}

_WS_TEXT = (
    "The browser's chat connection (WebSocket, RFC 6455). Client frames: `chat` starts a reply, "
    "`regenerate` adds another reply (earlier ones stay as alternatives), `continue` extends a "
    "reply, `resume` follows the reply in flight of a session (after a reload, from any tab or "
    "worker), `stop` cancels a reply (it ends with `done`, `stop_reason: cancelled`), "
    "`subscribe` follows a persona's cortex updates. Replies are generated on the server "
    "independently of the socket: closing it never stops one. Server frames: "
    "`start`, `chunk`, `done`, `error` (the same events as the SSE stream, as "
    "`{\"type\": <event>, ...data}`), and pushed `cortex` (an update finished), `title` (a "
    "session got its generated title) and `subscribed`. One reply at a time per connection "
    "(`error` `busy` otherwise); a malformed frame gets `error` `invalid_request` and the "
    "connection stays open. Schemas: `x-websocket`.")


def paths() -> dict:
    """The chat paths."""
    return {
        "/api/chat/stream": {
            "post": operation(
                "chatStream", "chat", "Send a message and stream the reply (SSE).",
                {"200": _STREAM, **errors("400", "404", "409")}, write=True,
                description="The user message and the reply are stored from the start (the "
                            "reply as `streaming`, its text flushed while it grows). A client "
                            "that disconnects only stops following: resume with "
                            "`GET /api/sessions/{sid}/stream`; stop with `POST …/stop`.",
                requestBody=json_body(model_ref(ChatMessage, "validation"))),
        },
        "/api/sessions/{sid}/regenerate": {
            "parameters": [SESSION_PARAM],
            "post": operation(
                "regenerateReply", "chat",
                "A new reply to the end of the active branch (or to `message_id`) as an SSE "
                "stream; earlier replies stay as alternatives.",
                {"200": _STREAM, **errors("400", "404", "409")}, write=True,
                requestBody=json_body(model_ref(ReplyTarget, "validation"),
                                      description="`{}` or `{\"message_id\"}`: JSON only, so "
                                                  "a form on another site cannot start it.")),
        },
        "/api/sessions/{sid}/continue": {
            "parameters": [SESSION_PARAM],
            "post": operation(
                "continueReply", "chat", "Let the model continue a reply from its text (SSE).",
                {"200": _STREAM, **errors("400", "404", "409")}, write=True,
                description="Only the last reply of a branch (`409 not_last`) with some text "
                            "(`409 nothing_to_continue`). The stream's chunks are the new text; "
                            "`done.text` is the whole reply.",
                requestBody=json_body(model_ref(ContinueTarget, "validation"))),
        },
        "/api/sessions/{sid}/stream": {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "resumeStream", "chat", "Follow the reply being generated (SSE, resumable).",
                {"200": _STREAM, "204": {"description": "No reply is being generated."},
                 **errors("400", "404")},
                description="Without `Last-Event-ID`: `start`, the text so far as one chunk, "
                            "then live chunks and `done`. With the `id` of the last event "
                            "received: only the rest (also after the reply finished). Works "
                            "from every worker process.",
                parameters=[{"name": "Last-Event-ID", "in": "header", "required": False,
                             "schema": {"type": "string"},
                             "description": "`<reply_id>:<offset>` from the last event "
                                            "received; any other value counts as absent."}]),
        },
        "/api/sessions/{sid}/stop": {
            "parameters": [SESSION_PARAM],
            "post": operation(
                "stopReply", "chat", "Stop the reply being generated in the session.",
                {"200": json_response("Whether a reply was stopped.", obj(
                    {"session_id": {"type": "string"}, "stopped": {"type": "boolean"}},
                    required=("session_id", "stopped"))), **errors("400", "404")},
                write=True, requestBody=json_body(model_ref(NoFields, "validation")),
                description="The reply ends with `done` (`stop_reason: cancelled`) and is kept, "
                            "marked incomplete, in whichever process generates it."),
        },
        "/ws/chat": {
            "get": operation(
                "chatSocket", "chat", "The chat WebSocket (upgrade).",
                {"101": {"description": "Switching Protocols: the WebSocket is open."},
                 **errors("400", "403")},
                description=_WS_TEXT, **{"x-websocket": _WEBSOCKET}),
        },
    }
