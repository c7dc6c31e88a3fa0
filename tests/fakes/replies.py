"""The reply builders tests script FakeClaude with (`from tests.fakes.claude import replies`).

Each reply answers one POST /v1/messages and renders as JSON or SSE per the request's `stream`.
"""
from tests.fakes.messages import (
    CREDIT_MESSAGE,
    ERROR_STATUS,
    HttpError,
    Message,
    Reply,
    Streamable,
    authentication_error,
    bad_request,
    credit_exhausted,
    http_error,
    overloaded,
    rate_limited,
    server_error,
    text,
    tool_use,
    truncated_tool_use,
)
from tests.fakes.streams import (
    FIXTURES,
    delayed,
    drop,
    fixture,
    gated,
    hang,
    scripted,
    stream_error,
    unfinished,
)

__all__ = [
    "CREDIT_MESSAGE", "ERROR_STATUS", "FIXTURES", "HttpError", "Message", "Reply", "Streamable",
    "authentication_error", "bad_request", "credit_exhausted", "delayed", "drop", "fixture",
    "gated", "hang", "http_error", "overloaded", "rate_limited", "scripted", "server_error",
    "stream_error", "text", "tool_use", "truncated_tool_use", "unfinished",
]
