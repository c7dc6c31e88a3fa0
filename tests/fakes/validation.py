"""The Messages API's request checks the client must never trip, with the API's style of message.

`problem(body)` returns the 400 invalid_request_error message, or None for a valid request.
"""
import re

_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_CHOICES = ("auto", "any", "tool", "none")


def problem(body: object) -> str | None:
    """Why the API would refuse this request body (None if it would accept it)."""
    if not isinstance(body, dict):
        return "Input should be a valid dictionary (the body must be a JSON object)"
    for field in ("model", "max_tokens", "messages"):
        if field not in body:
            return f"{field}: Field required"
    if not isinstance(body["model"], str) or not body["model"]:
        return "model: Input should be a valid string"
    if type(body["max_tokens"]) is not int or body["max_tokens"] < 1:
        return "max_tokens: Input should be greater than or equal to 1"
    if "stream" in body and not isinstance(body["stream"], bool):
        return "stream: Input should be a valid boolean"
    return (_system(body.get("system")) or _tools(body.get("tools"))
            or _tool_choice(body) or _messages(body["messages"]) or _breakpoints(body))


def _breakpoints(body) -> str | None:
    blocks = list(body.get("tools") or [])
    blocks += body["system"] if isinstance(body.get("system"), list) else []
    for message in body["messages"]:
        blocks += message["content"] if isinstance(message["content"], list) else []
    found = sum(1 for block in blocks if isinstance(block, dict) and block.get("cache_control"))
    if found > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
    return None


def _system(system) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or a list of text blocks"
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{i}.type: Input should be 'text'"
        if not isinstance(block.get("text"), str) or not block["text"]:
            return "system: text content blocks must be non-empty"
    return None


def _tools(tools) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{i}: Input should be a valid dictionary"
        if tool.get("type") not in (None, "custom"):
            names.add(tool.get("name"))
            continue
        if "name" not in tool:
            return f"tools.{i}.custom.name: Field required"
        if not isinstance(tool["name"], str) or not _TOOL_NAME.match(tool["name"]):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
        if "input_schema" not in tool:
            return f"tools.{i}.custom.input_schema: Field required"
        schema = tool["input_schema"]
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
        if tool["name"] in names:
            return "tools: Tool names must be unique."
        names.add(tool["name"])
    return None


def _tool_choice(body) -> str | None:
    if "tool_choice" not in body:
        return None
    choice, tools = body["tool_choice"], body.get("tools") or []
    if not isinstance(choice, dict) or choice.get("type") not in _CHOICES:
        tag = choice.get("type") if isinstance(choice, dict) else choice
        return (f"tool_choice: Input tag '{tag}' found using 'type' does not match any of the "
                "expected tags: 'auto', 'any', 'tool', 'none'")
    kind = choice["type"]
    flag = choice.get("disable_parallel_tool_use")
    if flag is not None and not isinstance(flag, bool):
        return f"tool_choice.{kind}.disable_parallel_tool_use: Input should be a valid boolean"
    allowed = {"type", "disable_parallel_tool_use"} | ({"name"} if kind == "tool" else set())
    extra = set(choice) - allowed
    if extra:
        return f"tool_choice.{kind}.{min(extra)}: Extra inputs are not permitted"
    if kind == "tool" and not isinstance(choice.get("name"), str):
        return "tool_choice.tool.name: Field required"
    if kind in ("any", "tool") and not tools:
        return "tool_choice: tool_choice may only be specified while providing tools"
    if kind == "tool" and choice["name"] not in {t.get("name") for t in tools}:
        return f"tool_choice: Tool '{choice['name']}' not found in provided tools"
    return None


def _blocks(i, message, last) -> tuple[list | None, str | None]:
    if not isinstance(message, dict):
        return None, f"messages.{i}: Input should be a valid dictionary"
    if message.get("role") not in ("user", "assistant"):
        return None, f"messages.{i}.role: Input should be 'user' or 'assistant'"
    if "content" not in message:
        return None, f"messages.{i}.content: Field required"
    content = message["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return None, f"messages.{i}.content: Input should be a valid string or list"
    if not content and not (last and message["role"] == "assistant"):
        return None, (f"messages.{i}: all messages must have non-empty content except for "
                      "the optional final assistant message")
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return None, f"messages.{i}.content.{j}.type: Field required"
        if block["type"] == "text" and isinstance(content, list) and not block.get("text"):
            return None, "messages: text content blocks must be non-empty"
    return blocks, None


def _tool_use_problem(i, blocks, seen: set) -> str | None:
    for j, block in enumerate(blocks):
        if block["type"] == "tool_result":
            return f"messages.{i}.content.{j}: `tool_result` blocks can only be in `user` messages"
        if block["type"] != "tool_use":
            continue
        for field in ("id", "name", "input"):
            if field not in block:
                return f"messages.{i}.content.{j}.tool_use.{field}: Field required"
        if not isinstance(block["id"], str) or not _TOOL_ID.match(block["id"]):
            return (f"messages.{i}.content.{j}.tool_use.id: String should match pattern "
                    "'^[a-zA-Z0-9_-]+$'")
        if not isinstance(block["input"], dict):
            return f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
        if block["id"] in seen:
            return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
        seen.add(block["id"])
    return None


def _tool_result_problem(i, blocks, pending: list) -> str | None:
    answered, others = [], False
    for j, block in enumerate(blocks):
        if block["type"] == "tool_use":
            return (f"messages.{i}.content.{j}: `tool_use` blocks can only be in `assistant` "
                    "messages")
        if block["type"] != "tool_result":
            others = True
            continue
        tool_id = block.get("tool_use_id")
        if not isinstance(tool_id, str):
            return f"messages.{i}.content.{j}.tool_result.tool_use_id: Field required"
        if tool_id not in pending:
            return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {tool_id}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message.")
        if tool_id in answered:
            return f"messages.{i}.content.{j}: duplicate `tool_result` for `tool_use_id` {tool_id}"
        if others:
            return (f"messages.{i}.content.{j}: `tool_result` blocks must come first in the "
                    "content of a user message, before any other content")
        answered.append(tool_id)
    missing = [tool_id for tool_id in pending if tool_id not in answered]
    return _unanswered(i - 1, missing) if missing else None


def _unanswered(i, ids) -> str:
    return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(ids)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message.")


def _messages(messages) -> str | None:
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    seen: set = set()
    pending: list = []
    for i, message in enumerate(messages):
        blocks, error = _blocks(i, message, i == len(messages) - 1)
        if error:
            return error
        if i == 0 and message["role"] != "user":
            return 'messages: first message must use the "user" role'
        if message["role"] == "assistant":
            if pending:
                return _unanswered(i - 1, pending)
            error = _tool_use_problem(i, blocks, seen)
            pending = [b["id"] for b in blocks if b["type"] == "tool_use"]
        else:
            error = _tool_result_problem(i, blocks, pending)
            pending = []
        if error:
            return error
    return _unanswered(len(messages) - 1, pending) if pending else None
