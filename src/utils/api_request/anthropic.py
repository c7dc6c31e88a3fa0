"""Converts between our provider-neutral types and the Messages API's shapes.

Works on the SDK's response objects by attribute and on plain dicts alike, so recorded or
hand-written data converts the same way as live responses.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..text import scrub, scrub_json
from .types import (
    ChunkResponse,
    SystemBlock,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)

EPHEMERAL = {"type": "ephemeral"}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def tool_param(tool: ToolDefinition | dict) -> dict:
    """A tool definition as the API expects it (dicts pass through unchanged)."""
    if isinstance(tool, dict):
        return tool
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def tool_params(tools: Iterable[ToolDefinition | dict]) -> list[dict]:
    """All tool definitions in API form, in order."""
    return [tool_param(tool) for tool in tools]


def tool_choice_param(choice: ToolChoice | str | None, disable_parallel: bool = False) -> dict | None:
    """The `tool_choice` field; None when the API default (auto, parallel allowed) applies."""
    if choice is None:
        return {"type": "auto", "disable_parallel_tool_use": True} if disable_parallel else None
    choice = ToolChoice.parse(choice)
    if choice.mode == "none":
        return {"type": "none"}
    param: dict = {"type": choice.mode}
    if choice.mode == "tool":
        param["name"] = choice.name
    if disable_parallel:
        param["disable_parallel_tool_use"] = True
    return param


def system_param(system: str | list[SystemBlock], cache_system: bool = False) -> str | list[dict] | None:
    """The `system` field with cache breakpoints; None when there is no system prompt."""
    if isinstance(system, str):
        if not system:
            return None
        if not cache_system:
            return system
        return [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    blocks: list[dict[str, Any]] = []
    for block in system:
        if not block.text:
            continue
        param: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cache:
            param["cache_control"] = EPHEMERAL
        blocks.append(param)
    if cache_system and blocks:
        blocks[-1]["cache_control"] = EPHEMERAL
    return blocks or None


def parse_tool_use(block: Any) -> ToolCall:
    """A `tool_use` block as a ToolCall (input that is not an object becomes `{}`); lone
    surrogates become U+FFFD, so the call can be run and sent back in the history."""
    arguments = scrub_json(_get(block, "input"))
    return ToolCall(id=_get(block, "id"), name=_get(block, "name"),
                    arguments=arguments if isinstance(arguments, dict) else {})


def tool_calls(content: Iterable[Any]) -> list[ToolCall]:
    """Every `tool_use` block of a response, in order."""
    return [parse_tool_use(block) for block in content or () if _get(block, "type") == "tool_use"]


def text_of(content: Iterable[Any]) -> str:
    """The text blocks of a response joined by newlines; tool_use and other blocks are ignored."""
    parts = [_get(block, "text") for block in content or () if _get(block, "type") == "text"]
    return scrub("\n".join(part for part in parts if part).strip())


def tool_result_block(result: ToolResult) -> dict:
    """A ToolResult as a `tool_result` block; `is_error` only on failures."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id,
                             "content": result.content}
    if result.is_error:
        block["is_error"] = True
    return block


def tool_results_message(results: Iterable[ToolResult]) -> dict:
    """The user turn that answers every tool_use of the previous assistant turn, in order."""
    return {"role": "user", "content": [tool_result_block(result) for result in results]}


def assistant_message(content: Iterable[Any]) -> dict:
    """A response's content as the assistant turn to send back (tool_use blocks kept, empty text dropped)."""
    blocks = [param for param in (_block_param(block) for block in content) if param is not None]
    return {"role": "assistant", "content": blocks}


def _block_param(block: Any) -> dict | None:
    kind = _get(block, "type")
    if kind == "text":
        text = _get(block, "text")
        return {"type": "text", "text": scrub(text)} if text else None
    if kind == "tool_use":
        call = parse_tool_use(block)
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
    if kind == "thinking":
        return {"type": "thinking", "thinking": _get(block, "thinking"),
                "signature": _get(block, "signature")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _get(block, "data")}
    if isinstance(block, dict):
        return block
    dump = getattr(block, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else {"type": kind}


def message_dict(response: Any) -> dict:
    """A response as plain JSON data: the SDK's own dump, or the fields read by attribute."""
    dump = getattr(response, "model_dump", None)
    if callable(dump) and not isinstance(response, dict):
        return dump(mode="json")
    fields = {name: _get(response, name) for name in ("id", "type", "role", "model",
                                                     "stop_reason", "stop_sequence")}
    plain = {name: value for name, value in fields.items() if isinstance(value, (str, type(None)))}
    content = [_block_param(block) for block in _get(response, "content") or ()]
    return {**plain, "content": [block for block in content if block is not None],
            "usage": usage_dict(_get(response, "usage"))}


def usage_dict(usage: Any) -> dict[str, int]:
    """Token usage as a plain dict; cache counters only when the API reported them."""
    result = {"input_tokens": _count(usage, "input_tokens"),
              "output_tokens": _count(usage, "output_tokens")}
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if _count(usage, key):
            result[key] = _count(usage, key)
    return result


def _count(usage: Any, key: str) -> int:
    value = _get(usage, key) if usage is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def chunk_from_event(event: Any) -> ChunkResponse | None:
    """Text or tool-call pieces carried by a content-block stream event; None for other events."""
    kind = _get(event, "type")
    if kind == "content_block_delta":
        delta = _get(event, "delta")
        delta_type = _get(delta, "type")
        if delta_type == "text_delta":
            return ChunkResponse(content=_get(delta, "text") or "")
        if delta_type == "input_json_delta":
            fragment = _get(delta, "partial_json") or None
            return ChunkResponse(tool_calls=[ToolCallDelta(_get(event, "index"), arguments_delta=fragment)])
        return None
    if kind == "content_block_start":
        block = _get(event, "content_block")
        if _get(block, "type") == "text":
            return ChunkResponse(content=_get(block, "text")) if _get(block, "text") else None
        if _get(block, "type") != "tool_use":
            return None
        initial = _get(block, "input")
        fragment = json.dumps(initial) if initial else None
        return ChunkResponse(tool_calls=[ToolCallDelta(_get(event, "index"), call_id=_get(block, "id"),
                                                       name=_get(block, "name"), arguments_delta=fragment)])
    return None
