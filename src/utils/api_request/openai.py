"""Converts between our provider-neutral types and the OpenAI Chat Completions shapes.

For OpenAI-compatible endpoints (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM, LM Studio).
Works on plain dicts (the SDK's objects are dumped to JSON data first) and on objects by
attribute, so this module needs no OpenAI package. The system prompt becomes one `system`
message built the same way every time, first in the list: servers with automatic prefix caching
reuse it byte for byte.
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any

from ..text import scrub, scrub_json
from .types import (
    RequestConfig,
    SystemBlock,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)

FINISH_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                  "function_call": "tool_use", "content_filter": "refusal"}


def get_field(obj: Any, name: str, default: Any = None) -> Any:
    """`obj[name]` for a dict, else the attribute (`default` when missing or `obj` is None)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def tool_call_deltas(delta_tool_calls: Iterable[Any] | None) -> list[ToolCallDelta] | None:
    """`choices[0].delta.tool_calls` as ToolCallDeltas, indexes as sent (see DeltaIndexer)."""
    if not delta_tool_calls:
        return None
    deltas = []
    for call in delta_tool_calls:
        function = get_field(call, "function")
        deltas.append(ToolCallDelta(
            index=get_field(call, "index", 0) if get_field(call, "index") is not None else 0,
            call_id=get_field(call, "id") or None,
            name=get_field(function, "name") or None,
            arguments_delta=get_field(function, "arguments") or None,
        ))
    return deltas


class DeltaIndexer:
    """Gives each streamed tool call its own index, whatever the server sent.

    Servers differ: some omit `index`, some reuse index 0 for every call, some repeat the id on
    each piece. A piece with an id not seen before starts a new call; a piece without an id
    continues the call at its index, else the last call. A call with no id at all gets one.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, int] = {}
        self._by_raw: dict[Any, int] = {}
        self._last: int | None = None
        self._count = 0

    def deltas(self, delta_tool_calls: Iterable[Any] | None) -> list[ToolCallDelta]:
        """The chunk's tool-call pieces with stable, distinct indexes."""
        out = []
        for call in delta_tool_calls or ():
            function = get_field(call, "function") or {}
            raw, call_id = get_field(call, "index"), get_field(call, "id") or None
            index, fresh_id = self._index(raw, call_id)
            arguments = get_field(function, "arguments")
            out.append(ToolCallDelta(index, call_id or fresh_id, get_field(function, "name") or None,
                                     arguments if isinstance(arguments, str) and arguments else
                                     (json.dumps(arguments) if isinstance(arguments, dict)
                                      else None)))
        return out

    def _index(self, raw: Any, call_id: str | None) -> tuple[int, str | None]:
        if call_id is not None and call_id in self._by_id:
            self._last = self._by_id[call_id]
            return self._last, None
        continuing = call_id is None and (raw in self._by_raw if raw is not None
                                          else self._last is not None)
        if continuing:
            last = self._by_raw[raw] if raw is not None else self._last
            self._last = last
            return last if last is not None else 0, None
        index, self._count = self._count, self._count + 1
        fresh = None if call_id else f"call_{uuid.uuid4().hex[:24]}"
        self._by_id[call_id or str(fresh)] = index
        if raw is not None:
            self._by_raw[raw] = index
        self._last = index
        return index, fresh


def tool_param(tool: ToolDefinition | dict) -> dict:
    """A tool definition as an OpenAI `function` tool (Anthropic-shaped dicts are converted)."""
    if isinstance(tool, dict):
        if tool.get("type") == "function":
            return tool
        return {"type": "function", "function": {
            "name": tool["name"], "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}}}}
    return {"type": "function", "function": {
        "name": tool.name, "description": tool.description, "parameters": tool.input_schema}}


def tool_choice_param(choice: ToolChoice | str | None) -> str | dict | None:
    """The `tool_choice` field ("auto", "required", "none" or one named function)."""
    if choice is None:
        return None
    choice = ToolChoice.parse(choice)
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.name}}
    return "required" if choice.mode == "any" else choice.mode


def system_text(system: str | list[SystemBlock]) -> str:
    """The system prompt as one string; blocks joined by a blank line, always the same way."""
    if isinstance(system, str):
        return system
    return "\n\n".join(block.text for block in system if block.text)


def content_text(content: Any) -> str:
    """A message's content as plain text (Anthropic text blocks joined; other blocks dropped)."""
    if isinstance(content, str):
        return scrub(content)
    parts = [get_field(block, "text") for block in content or () if get_field(block, "type") == "text"]
    return scrub("\n\n".join(part for part in parts if part))


def chat_messages(config: RequestConfig) -> list[dict]:
    """The system message first, then the history as plain role/content turns, then a prefill."""
    messages = []
    system = system_text(config.system_prompt)
    if system:
        messages.append({"role": "system", "content": system})
    for message in config.messages:
        if message.get("role") == "tool" or message.get("tool_calls"):
            messages.append(dict(message))
        else:
            messages.append({"role": message["role"], "content": content_text(message.get("content"))})
    if config.prefill and config.prefill.rstrip():
        messages.append({"role": "assistant", "content": config.prefill.rstrip()})
    return messages


def build_kwargs(config: RequestConfig, model: str, *, completion_tokens_field: str = "max_tokens",
                 tools: Iterable[ToolDefinition | dict] | None = None) -> dict:
    """Everything `chat.completions.create` needs except `stream`; optional fields only when set."""
    kwargs: dict = {"model": model, "messages": chat_messages(config),
                    completion_tokens_field: config.max_tokens}
    if config.temperature is not None:
        kwargs["temperature"] = config.temperature
    tools = list(tools) if tools is not None else config.tools
    if tools:
        kwargs["tools"] = [tool_param(tool) for tool in tools]
        choice = tool_choice_param(config.tool_choice)
        if choice is not None:
            kwargs["tool_choice"] = choice
        if config.disable_parallel_tool_use:
            kwargs["parallel_tool_calls"] = False
    return kwargs


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """The tool calls of a complete assistant message; unparsable arguments become `{}`."""
    calls = []
    for position, call in enumerate(get_field(message, "tool_calls") or ()):
        function = get_field(call, "function") or {}
        raw = get_field(function, "arguments")
        arguments: Any
        if isinstance(raw, dict):
            arguments = raw
        else:
            try:
                arguments = json.loads(raw or "{}")
            except (json.JSONDecodeError, TypeError):
                arguments = {}
        call_id = get_field(call, "id") or f"call_{position}_{uuid.uuid4().hex[:16]}"
        calls.append(ToolCall(call_id, get_field(function, "name") or "",
                              scrub_json(arguments) if isinstance(arguments, dict) else {}))
    return calls


def assistant_message(text: str, calls: Iterable[ToolCall]) -> dict:
    """The assistant turn that keeps its `tool_calls`, so the next turn's results match by id."""
    message: dict = {"role": "assistant", "content": text or None}
    tool_calls = [{"id": call.id, "type": "function",
                   "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
                  for call in calls]
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def tool_result_messages(results: Iterable[ToolResult]) -> list[dict]:
    """One `tool`-role message per result, each naming the call it answers, in call order."""
    return [{"role": "tool", "tool_call_id": result.tool_call_id,
             "content": f"Error: {result.content}" if result.is_error else result.content}
            for result in results]


def usage_dict(usage: Any) -> dict[str, int]:
    """Token usage in our names; `cached_tokens` only when the endpoint reported some."""
    result = {"input_tokens": _count(usage, "prompt_tokens"),
              "output_tokens": _count(usage, "completion_tokens")}
    cached = _count(get_field(usage, "prompt_tokens_details"), "cached_tokens")
    if cached:
        result["cached_tokens"] = cached
    return result


def _count(obj: Any, key: str) -> int:
    value = get_field(obj, key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stop_reason(finish_reason: str | None) -> str | None:
    """A finish_reason in the Messages API's words (so callers see one vocabulary)."""
    if finish_reason is None:
        return None
    return FINISH_REASONS.get(finish_reason, finish_reason)
