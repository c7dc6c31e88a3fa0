"""Chat: the SSE endpoints, the event stream they share with the WebSocket, and /ws/chat (§6).

An SSE response is described per event, the Open API 3.2 way (`event` + `data` carrying JSON
by `contentMediaType`/`contentSchema`); 3.1 tools read it as the schema of one event.
The WebSocket has no Open API operation type: `GET /ws/chat` documents the upgrade, and its
frames are in `x-websocket`.
"""
from .common import (PERSONA_ID, SESSION_ID, SESSION_PARAM, errors, json_body, nullable, obj,
                     operation, ref)
from .conversations import MESSAGE_TEXT

_CODES = ["not_configured", "authentication_failed", "credit_balance_exhausted", "rate_limited",
          "overloaded", "timeout", "connection_error", "invalid_request", "api_error",
          "session_busy", "session_not_found", "nothing_to_regenerate", "internal_error", "busy"]

SCHEMAS = {
    "ChatStart": obj({"session_id": {"type": "string", "pattern": SESSION_ID},
                      "message_id": {"type": "integer", "minimum": 1,
                                     "description": "The stored user message."}},
                     required=("session_id", "message_id")),
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
                        "error": nullable({"type": "string"})},
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
                   "arrive as an `error` event, never as an HTTP status.",
    "content": {"text/event-stream": {
        "schema": {"oneOf": [_sse_event(name, schema) for name, schema in _SSE_EVENTS.items()]},
    }},
}


def _frame(kind: str, schema: str | None = None) -> dict:
    """A server frame: `{"type": kind, ...data}`."""
    typed = obj({"type": {"const": kind}}, required=("type",))
    return {"allOf": [typed, ref(schema)]} if schema else typed


_WEBSOCKET = {
    "url": "/ws/chat",
    "frame_format": "One JSON object per text frame.",
    "client_frames": {
        "chat": obj({"type": {"const": "chat"},
                     "session_id": {"type": "string", "pattern": SESSION_ID},
                     "message": MESSAGE_TEXT}, required=("type", "session_id", "message")),
        "regenerate": obj({"type": {"const": "regenerate"},
                           "session_id": {"type": "string", "pattern": SESSION_ID}},
                          required=("type", "session_id")),
        "stop": obj({"type": {"const": "stop"}}, required=("type",)),
        "subscribe": obj({"type": {"const": "subscribe"},
                          "persona_id": {"type": "string", "pattern": PERSONA_ID}},
                         required=("type", "persona_id")),
    },
    "server_frames": {
        "start": _frame("start", "ChatStart"), "chunk": _frame("chunk", "ChatChunk"),
        "done": _frame("done", "ChatDone"), "error": _frame("error", "ChatError"),
        "cortex": _frame("cortex", "CortexEvent"), "title": _frame("title", "TitleEvent"),
        "subscribed": _frame("subscribed", "SubscribedEvent"),
    },
}

_WS_TEXT = (
    "The browser's chat connection (WebSocket, RFC 6455). Client frames: `chat` starts a reply, "
    "`regenerate` replaces the last one, `stop` cancels the reply in flight (it ends with `done`, "
    "`stop_reason: cancelled`), `subscribe` follows a persona's cortex updates. Server frames: "
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
                description="The user message is stored before the upstream call; the reply "
                            "when it ends. A client that disconnects cancels the reply.",
                requestBody=json_body(obj({"session_id": {"type": "string",
                                                          "pattern": SESSION_ID},
                                           "message": MESSAGE_TEXT},
                                          required=("session_id", "message"),
                                          additional=False))),
        },
        "/api/sessions/{sid}/regenerate": {
            "parameters": [SESSION_PARAM],
            "post": operation(
                "regenerateReply", "chat",
                "Replace the last reply (or answer an unanswered last message) as an SSE stream.",
                {"200": _STREAM, **errors("400", "404", "409")}, write=True,
                requestBody=json_body(obj({}, additional=False),
                                      description="`{}`: JSON only, so a form on another "
                                                  "site cannot start it.")),
        },
        "/ws/chat": {
            "get": operation(
                "chatSocket", "chat", "The chat WebSocket (upgrade).",
                {"101": {"description": "Switching Protocols: the WebSocket is open."},
                 **errors("400", "403")},
                description=_WS_TEXT, **{"x-websocket": _WEBSOCKET}),
        },
    }
