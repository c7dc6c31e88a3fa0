"""Turns whatever the SDK or the network raised into one stable error code with a readable message.

Mid-stream `error` events arrive as `APIStatusError` with status 200, so the body's `error.type`
decides first and the HTTP status only when the body says nothing. The key is masked in every
message we build, even though upstream messages should never contain it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import anthropic
import httpx2

from ..logsafe import mask_secrets, register_secret

log = logging.getLogger(__name__)


class KeyRemoved(Exception):
    """The API key was removed (in any worker) while a multi-round run was under way."""


@dataclass(frozen=True)
class ApiFailure:
    """A failure as callers see it: a §4 code, a message for people, and whether to retry."""

    code: str
    message: str
    retryable: bool


_TEXTS: dict[str, tuple[str, bool]] = {
    "not_configured": ("No API key configured: add one in Settings.", False),
    "authentication_failed": ("The API key was rejected: check it in Settings.", False),
    "credit_balance_exhausted": (
        "Your Anthropic credit balance is too low: add credits in the Anthropic console.", False),
    "rate_limited": ("Anthropic's rate limit was reached: wait a moment and try again.", True),
    "overloaded": ("Claude is overloaded right now: try again in a moment.", True),
    "timeout": ("Claude took too long to answer: try again.", True),
    "connection_error": ("The connection to Claude failed or broke off: check the network and "
                         "try again.", True),
    "invalid_request": ("Claude rejected the request as invalid.", False),
    "api_error": ("Claude's API had an internal error: try again.", True),
    "truncated_tool_call": ("The model ran out of tokens in the middle of a tool call, so the call "
                            "was not run: try again with a larger max_tokens.", False),
    "tool_execution_failed": ("A tool failed and the run was stopped.", False),
    "response_too_large": ("The answer grew far beyond what was asked for and was cut off.", False),
}
# Codes the client reports under another name (a runaway stream is an api_error to callers).
PUBLIC = {"response_too_large": "api_error"}

_BY_TYPE = {
    "authentication_error": "authentication_failed",
    "permission_error": "authentication_failed",
    "billing_error": "credit_balance_exhausted",
    "rate_limit_error": "rate_limited",
    "overloaded_error": "overloaded",
    "timeout_error": "timeout",
    "invalid_request_error": "invalid_request",
    "not_found_error": "invalid_request",
    "request_too_large": "invalid_request",
    "api_error": "api_error",
}

_BY_STATUS = {
    400: "invalid_request", 401: "authentication_failed", 402: "credit_balance_exhausted",
    403: "authentication_failed", 404: "invalid_request", 408: "timeout", 413: "invalid_request",
    422: "invalid_request", 429: "rate_limited", 504: "timeout", 529: "overloaded",
}


def failure(code: str, detail: str | None = None, secret: str | None = None) -> ApiFailure:
    """The standard failure for `code`, optionally followed by a detail (masked)."""
    text, retryable = _TEXTS[code]
    if detail:
        text = f"{text} ({detail})"
    return ApiFailure(PUBLIC.get(code, code), mask(text, secret), retryable)


def mask(text: str, secret: str | None) -> str:
    """`text` with `secret` and every run of 8 or more characters of it (or of any other known
    key) replaced: an upstream message echoing `sk-ant-api03-SECRETKEY...` shows no part of it."""
    register_secret(secret)
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return mask_secrets(text)


def from_exception(exc: BaseException, secret: str | None = None) -> ApiFailure:
    """Maps an exception raised while talking to the API to an ApiFailure."""
    if isinstance(exc, KeyRemoved):
        return failure("not_configured")
    if isinstance(exc, anthropic.APIStatusError):
        return _from_status_error(exc, secret)
    if isinstance(exc, (anthropic.APITimeoutError, httpx2.TimeoutException)):
        return failure("timeout")
    if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError, httpx2.StreamError)):
        return failure("connection_error")
    if isinstance(exc, anthropic.APIError) and "credit balance" in str(exc).lower():
        return failure("credit_balance_exhausted")
    log.error("unexpected error from the API client: %s", mask(repr(exc), secret),
              exc_info=exc)
    return failure("api_error")


def _from_status_error(exc: anthropic.APIStatusError, secret: str | None) -> ApiFailure:
    api_message = exc.api_message if isinstance(exc.api_message, str) else ""
    error_type = exc.type if isinstance(exc.type, str) else None
    if "credit balance" in api_message.lower():
        code = "credit_balance_exhausted"
    elif error_type in _BY_TYPE:
        code = _BY_TYPE[error_type]
    elif exc.status_code in _BY_STATUS:
        code = _BY_STATUS[exc.status_code]
    else:
        code = "api_error"
    log.warning("API error %s (status %s, type %s): %s",
                code, exc.status_code, error_type, mask(api_message, secret))
    return failure(code, _detail(code, exc, api_message), secret)


def _detail(code: str, exc: anthropic.APIStatusError, api_message: str) -> str | None:
    if code == "invalid_request":
        return api_message or None
    if code in ("rate_limited", "overloaded"):
        wait = exc.response.headers.get("retry-after") if exc.status_code != 200 else None
        return f"the API asked to wait {wait} s" if wait else None
    return None
