"""What "Test connection" finds out about an endpoint, with the real SDK and nothing stored.

Reachable (the model list answered), the models, whether a forced tool call works without and
with streaming (a request with one tiny `ping` tool and `tool_choice: required`, or a call the
server writes as text), and the context window when the endpoint reveals it: vLLM's
`max_model_len`, OpenRouter's `context_length` and LM Studio's `max_context_length` in the model
list, llama.cpp's `n_ctx` at `/props`. Ollama does not report its `num_ctx`, so it stays null.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from .errors import ApiFailure
from .openai_backend import OpenAIBackend
from .openai_errors import from_exception
from .text_calls import UnknownToolText, calls_from_text
from .types import RequestConfig, ToolChoice, ToolDefinition

log = logging.getLogger(__name__)

PING = ToolDefinition("ping", "Answers pong. Call it when asked to.",
                      {"type": "object", "properties": {"word": {"type": "string"}},
                       "required": ["word"]})
WINDOW_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")


def probe_openai(base_url: str, key: str | None, model: str | None, timeout: float) -> dict:
    """`{reachable, models, tools: {non_streaming, streaming}, context_window, error?}`."""
    report: dict[str, Any] = {"reachable": False, "models": [], "context_window": None,
                              "tools": {"non_streaming": False, "streaming": False}}
    backend = OpenAIBackend(base_url, key, timeout, 0)
    try:
        try:
            listed = backend.sdk.models.list(**backend.options)
            entries = [item.model_dump() for item in listed.data]
        except Exception as exc:
            problem = from_exception(exc, key)
            report["reachable"] = problem.code not in ("connection_error", "timeout")
            return {**report, "error": _error(problem)}
        report["reachable"] = True
        report["models"] = sorted({e["id"] for e in entries if isinstance(e.get("id"), str)})
        model = model or (report["models"][0] if report["models"] else None)
        report["context_window"] = _window(entries, model) or _props_window(base_url, timeout)
        if model:
            report["tools"], tools_problem = _tools(backend, model)
            if tools_problem is not None:
                report["error"] = _error(tools_problem)
        return report
    finally:
        backend.close()


def _tools(backend: OpenAIBackend, model: str) -> tuple[dict, ApiFailure | None]:
    config = RequestConfig(system_prompt="You are a connection test.",
                           messages=[{"role": "user", "content": "Call the ping tool with the "
                                                                  "word pong."}],
                           max_tokens=64, tools=[PING], tool_choice=ToolChoice.any())
    result, problem = {"non_streaming": False, "streaming": False}, None
    try:
        response = backend.create(**backend.kwargs(config, model))
        message = ((response.get("choices") or [{}])[0] or {}).get("message") or {}
        result["non_streaming"] = bool(message.get("tool_calls")) or _text_call(message)
    except Exception as exc:
        problem = from_exception(exc, backend.api_key)
    for event in backend.stream(config, model, None):
        if event.event_type == "done":
            result["streaming"] = bool(event.data.get("tool_calls")) or bool(
                _text_call({"content": event.data.get("text")}))
        elif event.event_type == "error" and problem is None:
            problem = ApiFailure(event.data["code"], event.data["message"], event.data["retryable"])
    return result, problem


def _text_call(message: dict) -> bool:
    try:
        return bool(calls_from_text(message.get("content"), {"ping"}))
    except UnknownToolText:
        return False


def _window(entries: list[dict], model: str | None) -> int | None:
    for entry in entries:
        if model is not None and entry.get("id") != model:
            continue
        for field in WINDOW_FIELDS:
            value = entry.get(field)
            if isinstance(value, int) and value > 0:
                return value
    return None


def _props_window(base_url: str, timeout: float) -> int | None:
    """llama.cpp's server reports its context size at `/props` (beside `/v1`)."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    url = urlunsplit((parts.scheme, parts.netloc, f"{root}/props", "", ""))
    try:
        response = httpx2.get(url, timeout=min(timeout, 5.0))
        data = response.json() if response.status_code == 200 else {}
    except (httpx2.HTTPError, ValueError):
        return None
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def _error(problem: ApiFailure) -> dict:
    return {"code": problem.code, "message": problem.message}
