"""Tool calls written as text: recovered when a server puts them into `content`.

Some servers (LM Studio with some templates, gpt-oss builds) return a call as JSON text with an
empty `tool_calls`; Hermes-style models wrap it in `<tool_call>` tags. The same parser reads the
JSON "edit plan" of the no-tools fallback. A call's arguments may be nested (`"arguments"`,
`"parameters"`, `"input"`) or written flat beside its name, and the name may be under `"tool"`.
Plain prose is never a call; JSON that names a tool we do not offer is refused
(`UnknownToolText`) rather than guessed at.
"""
from __future__ import annotations

import json
import re
import uuid

from ..text import scrub_json
from .types import ToolCall

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_NESTED = ("arguments", "parameters", "input")
_NOT_ARGUMENTS = {"name", "tool", "type", "id", "function"}


class UnknownToolText(ValueError):
    """The text is a tool call, but to a tool that was not offered (or it is malformed)."""


def _candidates(text: str) -> list[str]:
    tagged = _TAGGED.findall(text)
    if tagged:
        return tagged
    fenced = _FENCE.findall(text)
    return fenced or [text.strip()]


def _items(data: object) -> list | None:
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    for key in ("tool_calls", "calls", "edits"):
        if isinstance(data.get(key), list):
            return data[key]
    if "name" in data or "function" in data or "tool" in data:
        return [data]
    return None


def _call(item: object, known: set[str]) -> ToolCall:
    if not isinstance(item, dict):
        raise UnknownToolText("a call in the text is not a JSON object")
    nested = item.get("function")
    function: dict = nested if isinstance(nested, dict) else item
    name = function.get("name") or item.get("tool")
    arguments = _arguments(item, function)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise UnknownToolText(f"the arguments of {name!r} are not JSON") from exc
    if name not in known:
        raise UnknownToolText(f"the text calls a tool that was not offered: {str(name)[:60]!r}")
    if not isinstance(arguments, dict):
        raise UnknownToolText(f"the arguments of {name!r} are not a JSON object")
    return ToolCall(f"call_{uuid.uuid4().hex[:24]}", name, scrub_json(arguments))


def _arguments(item: dict, function: dict) -> object:
    """The call's arguments: nested under `arguments` / `parameters` / `input`, or else written
    flat beside its name (`{"name": "insert", "filename": …, "insert_line": 3}`)."""
    for source in (function, item):
        for key in _NESTED:
            if key in source:
                return source[key]
    return {key: value for key, value in item.items() if key not in _NOT_ARGUMENTS}


def calls_from_text(text: str | None, known: set[str]) -> list[ToolCall] | None:
    """The calls `text` holds, None when it is not a tool call at all (ordinary prose)."""
    if not text or ("{" not in text and "[" not in text):
        return None
    calls: list[ToolCall] = []
    for candidate in _candidates(text):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        items = _items(data)
        if items is None:
            continue
        calls.extend(_call(item, known) for item in items)
    return calls or None


def plan_summary(text: str | None) -> str:
    """The `summary` of a JSON edit plan ("" when there is none)."""
    for candidate in _candidates(text or ""):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("summary"), str):
            return data["summary"]
    return ""
