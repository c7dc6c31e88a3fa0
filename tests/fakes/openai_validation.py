"""Request checks of FakeOpenAI, as strict as the strictest Chat Completions server.

`problem(body)` returns what a server would answer with 400, or None for a valid request:
roles in order, every `tool_call_id` answered right after its call (and nothing else), tool
schemas well formed, no Anthropic-only fields (`system`, `cache_control`, `output_config`).
"""
import json
import re

ROLES = ("system", "developer", "user", "assistant", "tool")
MESSAGE_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content"}
TOP_KEYS = {"model", "messages", "max_tokens", "max_completion_tokens", "temperature", "stream",
            "stream_options", "tools", "tool_choice", "parallel_tool_calls", "response_format",
            "top_p", "stop", "seed", "user", "n"}
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def problem(body) -> str | None:
    """The 400 message for a bad request, None when the request is valid."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    unknown = set(body) - TOP_KEYS
    if unknown:
        return f"unknown field(s): {sorted(unknown)}"
    if "cache_control" in json.dumps(body):
        return "cache_control is not a Chat Completions field"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model is required"
    for field in ("max_tokens", "max_completion_tokens"):
        value = body.get(field)
        if value is not None and (not isinstance(value, int) or value < 1):
            return f"{field} must be a positive integer"
    if "stream_options" in body and body.get("stream") is not True:
        return "stream_options is only allowed when stream is true"
    return _tools_problem(body) or _messages_problem(body.get("messages"))


def _tools_problem(body: dict) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return "tool_choice needs tools" if "tool_choice" in body else None
    if not isinstance(tools, list) or not tools:
        return "tools must be a non-empty list"
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            return "each tool must be {type: function, function: {...}}"
        if not NAME.match(str(function.get("name", ""))):
            return f"invalid tool name {function.get('name')!r}"
        params = function.get("parameters")
        if not isinstance(params, dict) or params.get("type") != "object":
            return f"tool {function['name']}: parameters must be a JSON schema object"
    choice = body.get("tool_choice")
    if choice is not None and choice not in ("auto", "none", "required") and not (
            isinstance(choice, dict) and choice.get("type") == "function"):
        return "invalid tool_choice"
    return None


def _messages_problem(messages) -> str | None:
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    open_ids: list[str] = []
    for position, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return f"messages[{position}]: invalid role"
        if set(message) - MESSAGE_KEYS:
            return f"messages[{position}]: unknown field(s) {sorted(set(message) - MESSAGE_KEYS)}"
        role = message["role"]
        if role == "tool":
            if not open_ids or message.get("tool_call_id") != open_ids[0]:
                return (f"messages[{position}]: tool message answers "
                        f"{message.get('tool_call_id')!r}, expected {open_ids[:1]}")
            open_ids.pop(0)
            continue
        if open_ids:
            return f"messages[{position}]: tool_call_ids {open_ids} were not answered"
        if role == "system" and position != 0:
            return f"messages[{position}]: the system message must come first"
        content_problem = _content_problem(message, position)
        if content_problem:
            return content_problem
        if role == "assistant" and message.get("tool_calls"):
            ids = _call_ids(message["tool_calls"])
            if isinstance(ids, str):
                return f"messages[{position}]: {ids}"
            open_ids = ids
    if open_ids:
        return f"tool_call_ids {open_ids} were not answered"
    return None


def _content_problem(message: dict, position: int) -> str | None:
    content = message.get("content")
    if content is None and message["role"] == "assistant" and message.get("tool_calls"):
        return None
    if isinstance(content, str):
        return None
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return None
    return f"messages[{position}]: content must be a string or a list of text parts"


def _call_ids(calls) -> list[str] | str:
    ids = []
    for call in calls if isinstance(calls, list) else [None]:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or call.get("type") != "function" or not call.get("id"):
            return "each tool call needs id, type function and a function"
        try:
            json.loads(function.get("arguments"))
        except (TypeError, ValueError):
            return f"tool call {call['id']}: arguments must be a JSON string"
        ids.append(call["id"])
    if len(set(ids)) != len(ids):
        return "tool call ids must be unique"
    return ids
