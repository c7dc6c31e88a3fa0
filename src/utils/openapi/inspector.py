"""The prompt inspector and the context meter (docs/prompt-inspector.md)."""
from .common import SESSION_PARAM, errors, json_response, nullable, obj, operation, path_param, ref

_COUNT = {"type": "string", "enum": ["provider", "estimate"],
          "description": "`provider`: the provider's own count (Anthropic's count_tokens); "
                         "`estimate`: UTF-8 bytes / 3, rounded up (no counting offered, or the "
                         "count failed or ran out of time)."}
_INT = {"type": "integer", "minimum": 0}
_SECTION = obj({
    "kind": {"type": "string", "enum": ["persona", "cortex", "about", "world", "time", "system",
                                        "history", "message", "instructions", "continuation"]},
    "label": {"type": "string", "description": "The cortex file (`memory.md`, …) or the kind."},
    "text": {"type": "string", "description": "The section's text as sent (the history: its "
                                              "messages joined by a blank line)."},
    "tokens": _INT, "counted_by": _COUNT,
    "cached": {"type": "boolean", "description": "Inside the cached prefix (up to the last "
                                                 "`cache_control` breakpoint)."},
    "start": {**_INT, "description": "Byte offset of the section's content in the body."},
    "end": {**_INT, "description": "Byte offset after it."},
    "offset": {**_INT, "description": "Where `raw` begins in the body."},
    "raw": {"type": "string", "description": "The body's bytes from `offset` to the next "
            "section's `offset`: joined in `offset` order they are the body, byte for byte."},
    "messages": {"type": "array", "items": obj({"role": {"type": "string"},
                                                "text": {"type": "string"}})},
    "revision": nullable({"type": "integer"}),
    "entries": {"type": "array", "items": {"type": "object"},
                "description": "The world info entries that fired (as `Message.world_info`)."},
}, required=("kind", "label", "text", "tokens", "counted_by", "cached", "start", "end",
             "offset", "raw"))
_USAGE = obj({"input_tokens": _INT, "output_tokens": _INT, "cache_read_tokens": _INT,
              "cache_write_tokens": _INT, "prompt_tokens": _INT})

SCHEMAS = {
    "PromptSection": _SECTION,
    "ReplyPrompt": obj({
        "message_id": {"type": "integer"}, "session_id": {"type": "string"},
        "recorded": {"type": "boolean", "description": "false: a reply from before requests "
                     "were recorded, or one still being written."},
        "status": {"type": "string"},
        "provider": nullable({"type": "string"}), "model": nullable({"type": "string"}),
        "created_at": {"type": "string"},
        "usage": nullable(ref("PromptUsage")),
        "total": nullable(obj({"tokens": _INT, "counted_by": _COUNT})),
        "body_bytes": nullable(_INT),
        "context_window": _INT,
        "sections": {"type": "array", "items": ref("PromptSection")},
    }, required=("message_id", "session_id", "recorded", "provider", "model", "usage", "total",
                 "sections", "context_window")),
    "PromptUsage": _USAGE,
    "ContextMeter": obj({
        "session_id": {"type": "string"}, "reply_id": nullable({"type": "integer"}),
        "used": nullable(_INT), "window": _INT, "provider": {"type": "string"},
        "counted_by": nullable({"type": "string", "enum": ["usage", "estimate"]}),
    }, required=("session_id", "reply_id", "used", "window", "counted_by")),
}


def paths() -> dict:
    """The inspector's paths."""
    mid = path_param("mid", {"type": "integer", "minimum": 1}, "A reply's message id.")
    return {
        "/api/sessions/{sid}/messages/{mid}/prompt": {
            "parameters": [SESSION_PARAM, mid],
            "get": operation(
                "getReplyPrompt", "messages", "The request a reply was generated from.",
                {"200": json_response("The recorded request in sections, with token counts, "
                                      "model, provider and usage.", ref("ReplyPrompt")),
                 **errors("400", "404")},
                description="`400 not_a_reply` for a person's message; `404` for an unknown "
                            "session or a message of another session."),
        },
        "/api/sessions/{sid}/context": {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "getContextMeter", "sessions",
                "How full the context window was with the last request of the active branch.",
                {"200": json_response("Tokens of the last request (the usage it reported, else "
                                      "an estimate) and the window.", ref("ContextMeter")),
                 **errors("404")}),
        },
    }
