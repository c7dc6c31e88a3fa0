"""What "Test connection" finds out about an endpoint, with the real SDK and nothing stored.

Reachable (the model list answered), the models, whether a forced tool call works without and
with streaming (a request with one tiny `ping` tool and `tool_choice: required`, or a call the
server writes as text), and the context window when the endpoint reveals it: vLLM's
`max_model_len`, OpenRouter's `context_length` and LM Studio's `max_context_length` in the model
list, llama.cpp's `n_ctx` at `/props`. Ollama does not report its `num_ctx`, so it stays null.

The probe is pointed at a URL the caller names, so it reports as little as it can about what
it reached (DESIGN §15 "Keys"): no redirect is followed; errors carry our code and our own
message, with at most the far side's HTTP status (never its text); models are listed only from
a response that is a real model list; `reachable` is true only when the endpoint answered like
the API (a model list, or a refused key); and the whole probe ends within `BUDGET` seconds
(deadline.py), however the far side behaves.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from .deadline import Deadline
from .errors import ApiFailure
from .openai_backend import MAX_BODY_CHARS, OpenAIBackend
from .openai_errors import failure as openai_failure, from_exception
from .text_calls import UnknownToolText, calls_from_text
from .types import RequestConfig, ToolChoice, ToolDefinition

log = logging.getLogger(__name__)

BUDGET = 9.0
MAX_MODELS = 2000
MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+\-]{0,199}$")
PING = ToolDefinition("ping", "Answers pong. Call it when asked to.",
                      {"type": "object", "properties": {"word": {"type": "string"}},
                       "required": ["word"]})
WINDOW_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")


class NotAModelList(Exception):
    """The models request answered 2xx with something else than a model list."""


def empty_report() -> dict[str, Any]:
    """A report with nothing found yet."""
    return {"reachable": False, "models": [], "model": None, "context_window": None,
            "tools": {"non_streaming": False, "streaming": False}}


def model_entries(raw: Any, kind: str | None = None) -> list[dict]:
    """The entries of a real model list in the SDK's raw response `raw` (`{"data": [{"id": …},
    …]}`, JSON, ids that look like model ids, each entry's `object`/`type` `kind` when given),
    else NotAModelList."""
    content_type = raw.headers.get("content-type", "")
    text = raw.text() if callable(raw.text) else raw.text  # a method in anthropic's SDK
    if "json" not in content_type or len(text) > MAX_BODY_CHARS:
        raise NotAModelList()
    try:
        data = json.loads(text)
    except ValueError:
        raise NotAModelList() from None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list) or len(entries) > MAX_MODELS or not all(
            isinstance(e, dict) and isinstance(e.get("id"), str) and MODEL_ID.fullmatch(e["id"])
            and (kind is None or e.get("object", e.get("type")) in (kind, None))
            for e in entries):
        raise NotAModelList()
    return entries


def probe_error(problem: ApiFailure, status: int | None, expired: bool,
                texts: Callable[[str], ApiFailure] = openai_failure) -> dict:
    """Our code and our own message for a failed step, with at most the far side's status."""
    code = "timeout" if expired else problem.code
    try:
        message = texts(code).message
    except KeyError:
        code, message = "api_error", texts("api_error").message
    if status is not None and not expired:
        message = f"{message} (HTTP {status})"
    return {"code": code, "message": message}


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an SDK error carries, if any."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def probe_openai(base_url: str, key: str | None, model: str | None, timeout: float) -> dict:
    """`{reachable, models, model, tools: {non_streaming, streaming}, context_window, error?}`;
    `model` is the one tested (the given one, else the first listed)."""
    report = empty_report()
    deadline = Deadline(min(timeout, BUDGET))
    backend = OpenAIBackend(base_url, key, deadline.remaining(), 0, event_hooks=deadline.hooks())
    try:
        try:
            raw = backend.sdk.models.with_raw_response.list(**backend.options)
            entries = model_entries(raw, "model")
        except NotAModelList:
            return {**report, "error": probe_error(openai_failure("not_an_api"), None, False)}
        except Exception as exc:
            problem = from_exception(exc, key)
            report["reachable"] = problem.code == "authentication_failed"
            return {**report, "error": probe_error(problem, status_of(exc), deadline.expired)}
        report["reachable"] = True
        report["models"] = sorted({e["id"] for e in entries})
        model = model or (report["models"][0] if report["models"] else None)
        report["model"] = model
        report["context_window"] = _window(entries, model) or _props_window(base_url, deadline)
        if model:
            report["tools"], error = _tools(backend, model, deadline)
            if error is not None:
                report["error"] = error
        return report
    finally:
        backend.close()
        deadline.close()


def list_openai_models(base_url: str, key: str | None, timeout: float) -> dict:
    """`{models, error?}` from the endpoint's `GET /models` alone (no generation)."""
    deadline = Deadline(min(timeout, BUDGET))
    backend = OpenAIBackend(base_url, key, deadline.remaining(), 0, event_hooks=deadline.hooks())
    try:
        raw = backend.sdk.models.with_raw_response.list(**backend.options)
        entries = model_entries(raw, "model")
    except NotAModelList:
        return {"models": [], "error": probe_error(openai_failure("not_an_api"), None, False)}
    except Exception as exc:
        return {"models": [], "error": probe_error(from_exception(exc, key), status_of(exc),
                                                   deadline.expired)}
    finally:
        backend.close()
        deadline.close()
    return {"models": sorted({entry["id"] for entry in entries})}


def _tools(backend: OpenAIBackend, model: str, deadline: Deadline) -> tuple[dict, dict | None]:
    config = RequestConfig(system_prompt="You are a connection test.",
                           messages=[{"role": "user", "content": "Call the ping tool with the "
                                                                  "word pong."}],
                           max_tokens=64, tools=[PING], tool_choice=ToolChoice.any())
    result, error = {"non_streaming": False, "streaming": False}, None
    try:
        response = backend.create(**backend.kwargs(config, model))
        message = ((response.get("choices") or [{}])[0] or {}).get("message") or {}
        result["non_streaming"] = bool(message.get("tool_calls")) or _text_call(message)
    except Exception as exc:
        error = probe_error(from_exception(exc, backend.api_key), status_of(exc),
                            deadline.expired)
    if deadline.expired:
        return result, error or probe_error(openai_failure("timeout"), None, True)
    for event in backend.stream(config, model, None):
        if event.event_type == "done":
            result["streaming"] = bool(event.data.get("tool_calls")) or bool(
                _text_call({"content": event.data.get("text")}))
        elif event.event_type == "error" and error is None:
            error = probe_error(ApiFailure(event.data["code"], "", False), None,
                                deadline.expired)
    return result, error


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


def _props_window(base_url: str, deadline: Deadline) -> int | None:
    """llama.cpp's server reports its context size at `/props` (beside `/v1`)."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    url = urlunsplit((parts.scheme, parts.netloc, f"{root}/props", "", ""))
    try:
        with httpx2.Client(follow_redirects=False, event_hooks=deadline.hooks()) as http:
            response = http.get(url)
            data = response.json() if response.status_code == 200 else {}
    except (httpx2.HTTPError, ValueError):
        return None
    settings = data.get("default_generation_settings") if isinstance(data, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    return value if isinstance(value, int) and value > 0 else None
