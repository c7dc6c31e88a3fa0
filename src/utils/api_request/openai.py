"""Converts between our provider-neutral types and the OpenAI chat-completions shapes.

For OpenAI-compatible endpoints. Accepts the OpenAI SDK's objects by attribute or plain dicts of
the same shape, so this module needs no OpenAI package.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from .types import ToolCall, ToolCallDelta, ToolChoice, ToolDefinition, ToolResult


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def tool_call_deltas(delta_tool_calls: Iterable[Any] | None) -> list[ToolCallDelta] | None:
    """`choices[0].delta.tool_calls` as ToolCallDeltas; None when the chunk carries none."""
    if not delta_tool_calls:
        return None
    deltas = []
    for call in delta_tool_calls:
        function = _get(call, "function")
        deltas.append(ToolCallDelta(
            index=_get(call, "index", 0),
            call_id=_get(call, "id") or None,
            name=_get(function, "name") or None,
            arguments_delta=_get(function, "arguments") or None,
        ))
    return deltas


def tool_param(tool: ToolDefinition) -> dict:
    """A tool definition as an OpenAI `function` tool."""
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


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """The tool calls of a complete assistant message; unparsable arguments become `{}`."""
    calls = []
    for call in _get(message, "tool_calls") or ():
        function = _get(call, "function")
        try:
            arguments = json.loads(_get(function, "arguments") or "{}")
        except json.JSONDecodeError:
            arguments = {}
        calls.append(ToolCall(_get(call, "id"), _get(function, "name"),
                              arguments if isinstance(arguments, dict) else {}))
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
    """One `tool`-role message per result, each naming the call it answers."""
    return [{"role": "tool", "tool_call_id": result.tool_call_id,
             "content": f"Error: {result.content}" if result.is_error else result.content}
            for result in results]
