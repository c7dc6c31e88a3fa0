"""Failures on the OpenAI-compatible path: exceptions and error bodies to stable §4 codes.

Every server family words errors differently: OpenAI and OpenRouter send `{"error": {...}}`
(OpenRouter adds `metadata.provider_name`), Ollama may send `{"error": "text"}`, vLLM sends
`{"object": "error", "message", "type", "code"}` at the top level. The HTTP status decides the
code; the body only adds a readable detail and the "model not found" case. The key is masked
in every message.
"""
from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Mapping
from types import ModuleType

import httpx2

from .errors import ApiFailure, KeyRemoved, mask

log = logging.getLogger(__name__)

TEXTS: dict[str, tuple[str, bool]] = {
    "not_configured": ("No model endpoint configured: set the base URL (and a key if it needs "
                       "one) in Settings.", False),
    "authentication_failed": ("The endpoint rejected the API key: check it in Settings.", False),
    "credit_balance_exhausted": ("The endpoint says the account has no credit left.", False),
    "rate_limited": ("The endpoint's rate limit was reached: wait a moment and try again.", True),
    "overloaded": ("The model server is overloaded right now: try again in a moment.", True),
    "timeout": ("The model took too long to answer: try again.", True),
    "connection_error": ("The model endpoint could not be reached or the connection broke off: "
                         "check the base URL and that the server is running.", True),
    "invalid_request": ("The endpoint rejected the request as invalid.", False),
    "api_error": ("The model server had an internal error: try again.", True),
    "model_not_found": ("The endpoint does not know this model: pick one from its model list "
                        "in Settings.", False),
    "not_an_api": ("The base URL answered, but not like an OpenAI-compatible API: check it "
                   "(it usually ends in /v1).", False),
    "response_too_large": ("The endpoint sent far more than the requested answer; it was cut "
                           "off.", False),
    "tools_unsupported": ("This model cannot update memory: the endpoint refused tool calls "
                          "and no usable edit plan came back.", False),
    "truncated_tool_call": ("The model ran out of tokens in the middle of a tool call, so the "
                            "call was not run: try again with a larger max_tokens.", False),
    "tool_execution_failed": ("A tool failed and the run was stopped.", False),
}
# Codes the client reports; not_an_api and response_too_large are reported as api_error.
PUBLIC = {"not_an_api": "api_error", "response_too_large": "api_error"}

_BY_STATUS = {
    400: "invalid_request", 401: "authentication_failed", 402: "credit_balance_exhausted",
    403: "authentication_failed", 404: "model_not_found", 408: "timeout", 413: "invalid_request",
    422: "invalid_request", 429: "rate_limited", 502: "overloaded", 503: "overloaded",
    504: "timeout", 529: "overloaded",
}
_MODEL_MISSING = re.compile(r"model.*(not found|does not exist|not exist|no such|unknown)|"
                            r"(not found|unknown|invalid).*model", re.IGNORECASE)
_TOOLS_REFUSED = re.compile(r"tool|function.?call", re.IGNORECASE)


class NotAnApi(Exception):
    """A 200 answer that is not a Chat Completions object; `args[0]` is the code."""


def failure(code: str, detail: str | None = None, secret: str | None = None) -> ApiFailure:
    """The standard failure for `code` on this path, optionally with a (masked) detail."""
    text, retryable = TEXTS[code]
    if detail:
        text = f"{text} ({detail[:300]})"
    return ApiFailure(PUBLIC.get(code, code), mask(text, secret), retryable)


def body_message(body: object) -> tuple[str, dict]:
    """(message, metadata) from any family's error body."""
    if isinstance(body, dict) and "error" in body and len(body) <= 3 and not body.get("message"):
        body = body["error"]
    if isinstance(body, str):
        return body, {}
    if not isinstance(body, dict):
        return "", {}
    message, metadata = body.get("message"), body.get("metadata")
    return (message if isinstance(message, str) else "",
            metadata if isinstance(metadata, dict) else {})


def from_exception(exc: BaseException, secret: str | None = None) -> ApiFailure:
    """Maps what the SDK or the network raised to an ApiFailure."""
    if isinstance(exc, KeyRemoved):
        return failure("not_configured")
    if isinstance(exc, NotAnApi):
        return failure(str(exc))
    # The SDK is imported on first use of an endpoint (openai_sdk.py); only then can it raise.
    openai_sdk = sys.modules.get("openai")
    mapped = _sdk_failure(exc, openai_sdk, secret) if openai_sdk is not None else None
    return mapped or _network_failure(exc, secret)


def _sdk_failure(exc: BaseException, openai_sdk: ModuleType, secret: str | None
                 ) -> ApiFailure | None:
    if isinstance(exc, openai_sdk.APIStatusError):
        return from_status(exc.status_code, exc.body, exc.response.headers, secret)
    if isinstance(exc, openai_sdk.APITimeoutError):
        return failure("timeout")
    if isinstance(exc, openai_sdk.APIConnectionError):
        return failure("connection_error")
    if isinstance(exc, openai_sdk.APIResponseValidationError):
        return failure("not_an_api")
    if isinstance(exc, openai_sdk.APIError):  # an error object inside a 200 stream
        message, _ = body_message(exc.body)
        return failure(_code_for_text(message, exc.body) or "api_error", message or None, secret)
    return None


def _network_failure(exc: BaseException, secret: str | None) -> ApiFailure:
    if isinstance(exc, httpx2.TimeoutException):
        return failure("timeout")
    if isinstance(exc, (httpx2.TransportError, httpx2.StreamError)):
        return failure("connection_error")
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return failure("not_an_api", "a line of the answer was not JSON")
    log.error("unexpected error from the OpenAI client: %s", mask(repr(exc), secret), exc_info=exc)
    return failure("api_error")


def from_status(status: int, body: object, headers: Mapping[str, str] | None,
                secret: str | None) -> ApiFailure:
    """An HTTP error answer as an ApiFailure (`body` is the parsed JSON or text)."""
    message, metadata = body_message(body)
    code = _BY_STATUS.get(status) or ("api_error" if status >= 500 else "invalid_request")
    if status == 404:
        code = "model_not_found" if "model" in (message or "").lower() else "not_an_api"
    if code == "invalid_request" and _MODEL_MISSING.search(message or ""):
        code = "model_not_found"
    detail = message or None
    provider = metadata.get("provider_name")
    if provider:
        detail = f"{provider}: {message}" if message else str(provider)
    if code in ("rate_limited", "overloaded"):
        wait = headers.get("retry-after") if headers is not None else None
        detail = f"the endpoint asked to wait {wait} s" if wait else detail
    log.warning("endpoint error %s (status %s): %s", code, status, mask(message, secret))
    return failure(code, detail, secret)


def _code_for_text(message: str, body: object = None) -> str | None:
    """The code an error inside a 200 stream names (its type/code, else its wording)."""
    kind = " ".join(str(body.get(name) or "") for name in ("type", "code")) \
        if isinstance(body, dict) else ""
    text = f"{kind} {message or ''}".lower()
    if _MODEL_MISSING.search(message or ""):
        return "model_not_found"
    if "rate limit" in text or "rate_limit" in text:
        return "rate_limited"
    if "overloaded" in text:
        return "overloaded"
    return None


def refuses_tools(problem: ApiFailure) -> bool:
    """Whether a 4xx looks like "this model/endpoint does not support tools"."""
    return problem.code == "invalid_request" and bool(_TOOLS_REFUSED.search(problem.message))
