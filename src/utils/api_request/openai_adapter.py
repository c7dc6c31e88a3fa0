"""OpenAI-compatible Chat Completions as a `ProviderAdapter` of the one engine.

Shapes come from the converter `openai.py`; the SDK lives in `openai_backend.py` (imported
lazily, only once an endpoint is used). History stays valid for strict servers: the assistant
turn keeps its `tool_calls`, then one `role: tool` message per `tool_call_id`, in call order. A
call written as JSON text in `content` is recovered when it names one of the offered tools (JSON
naming any other tool is `tools_unsupported`, nothing is guessed); an answer with calls stopped
for them (`tool_use`), whatever `finish_reason` the server sent. An endpoint that refuses tools
gets the edit-plan fallback (`edit_plan.py`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .adapter import Delta, LoopView, RawStream, Refused, Round
from .edit_plan import run_edit_plan
from .errors import ApiFailure
from .openai import (
    DeltaIndexer,
    assistant_message,
    build_kwargs,
    get_field,
    parse_tool_calls,
    stop_reason,
    tool_result_messages,
    usage_dict,
)
from .openai_errors import failure, from_exception, refuses_tools
from .text_calls import UnknownToolText, calls_from_text
from .types import ApiResponse, RequestConfig, ToolCall, ToolDefinition, ToolResult

JSON_MODE = {"response_format": {"type": "json_object"}}


class ChatEndpoint(Protocol):
    """One endpoint's client (`OpenAIBackend`): what the adapter sends through."""

    def create(self, **kwargs: Any) -> dict:
        """One `chat.completions.create` as plain JSON data."""

    def open_stream(self, body: dict) -> RawStream:
        """One streaming `chat.completions.create`."""


class OpenAIAdapter:
    """Chat Completions; `endpoint()` is the client to use now (raises KeyRemoved when the
    provider was switched away), so a tool loop's later rounds follow the settings."""

    provider = "openai_compatible"

    def __init__(self, endpoint: Callable[[], ChatEndpoint], secret: str | None, timeout: float,
                 tokens_field: str):
        self._endpoint = endpoint
        self.secret = secret
        self.timeout = timeout
        self.tokens_field = tokens_field

    def body(self, config: RequestConfig, model: str,
             tools: Sequence[ToolDefinition | dict] | None) -> dict:
        """`chat.completions.create`'s keyword arguments (see `openai.build_kwargs`)."""
        return build_kwargs(config, model, completion_tokens_field=self.tokens_field, tools=tools)

    def complete(self, body: dict, max_tokens: int) -> Round:
        """One `chat.completions.create`; calls written as text are recovered (see above)."""
        response = self._endpoint().create(**{**body, self.tokens_field: max_tokens})
        choice = (response.get("choices") or [{}])[0] or {}
        message = choice.get("message") or {}
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = parse_tool_calls(message) or self._recovered(text, body)
        if calls and not message.get("tool_calls"):
            message, text = {**message, "content": None}, ""
        return Round(text=(text or "").strip(), calls=calls,
                     stop_reason=_stop_reason(choice.get("finish_reason"), calls),
                     usage=usage_dict(response.get("usage")), raw=response, content=message)

    def _recovered(self, text: str, body: dict) -> list[ToolCall]:
        known = {get_field(get_field(tool, "function"), "name") for tool in body.get("tools") or ()}
        if not known:
            return []
        try:
            return calls_from_text(text, known) or []
        except UnknownToolText as exc:
            raise Refused(self.problem("tools_unsupported", str(exc))) from exc

    def open_stream(self, body: dict) -> RawStream:
        """The streaming response (the request is sent here)."""
        return self._endpoint().open_stream(body)

    def translator(self) -> _Translation:
        """A fresh chunk translator."""
        return _Translation()

    def append_round(self, body: dict, answer: Round, results: list[ToolResult]) -> None:
        """The assistant turn with its `tool_calls`, then one `tool` message per call."""
        text = get_field(answer.content, "content") or ""
        body["messages"] += [assistant_message(text, answer.calls), *tool_result_messages(results)]

    def failure(self, exc: BaseException) -> ApiFailure:
        """See `openai_errors.from_exception`."""
        return from_exception(exc, self.secret)

    def problem(self, code: str, detail: str | None = None) -> ApiFailure:
        """See `openai_errors.failure`."""
        return failure(code, detail, self.secret)

    def fallback(self, loop: LoopView, problem: ApiFailure) -> ApiResponse | None:
        """The edit plan, when the endpoint refused the tools."""
        return run_edit_plan(loop, self, JSON_MODE) if refuses_tools(problem) else None


def _stop_reason(finish: str | None, calls: list[ToolCall]) -> str | None:
    """Servers differ in the finish_reason they send with calls (`tool_calls`, `stop`, none);
    a complete answer that holds calls stopped for them."""
    if calls and finish != "length":
        return "tool_use"
    return stop_reason(finish)


class _Translation:
    """Chat Completions chunks as Deltas; each streamed call gets its own index."""

    def __init__(self) -> None:
        self.indexer = DeltaIndexer()

    def feed(self, chunk: Any) -> list[Delta]:
        out: list[Delta] = []
        usage = get_field(chunk, "usage")
        if usage is not None:
            out.append(Delta(usage=usage_dict(usage)))
        for choice in (get_field(chunk, "choices") or ())[:1]:
            delta = get_field(choice, "delta")
            text = get_field(delta, "content")
            if isinstance(text, str) and text:
                out.append(Delta(text=text))
            out += [Delta(tool=piece)
                    for piece in self.indexer.deltas(get_field(delta, "tool_calls"))]
            if get_field(choice, "finish_reason"):
                out.append(Delta(stop_reason=stop_reason(get_field(choice, "finish_reason"))))
        return out
