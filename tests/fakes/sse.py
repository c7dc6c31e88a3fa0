"""Server-sent events as the Messages API writes them, and the way back from events to a message.

Every message reply is built as an event list first; the JSON answer is that list assembled,
so a reply reads the same whether the client streams or not.
"""
import json
import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    """An id shaped like the API's (`msg_01…`, `toolu_01…`): prefix, "_", 24 alnum chars."""
    return f"{prefix}_01" + "".join(secrets.choice(_ALPHABET) for _ in range(22))


def dumps(data: object) -> str:
    """Compact JSON, as the API writes it."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def render(name: str, data: dict) -> bytes:
    """One event on the wire: `event: <name>`, `data: <json>`, blank line."""
    payload = '{"type": "ping"}' if name == "ping" else dumps(data)
    return f"event: {name}\ndata: {payload}\n\n".encode()


def split_raw(raw: bytes) -> list[bytes]:
    """Cut a recorded stream into its events, byte for byte (separators kept with each event)."""
    parts: list[bytes] = []
    rest = raw
    while rest:
        cut = rest.find(b"\n\n")
        end = len(rest) if cut < 0 else cut + 2
        parts.append(rest[:end])
        rest = rest[end:]
    return parts


def parse(raw_event: bytes) -> tuple[str | None, dict | None]:
    """The (event name, parsed data) of one raw event."""
    name, data = None, []
    for line in raw_event.decode("utf-8").splitlines():
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return name, (json.loads("\n".join(data)) if data else None)


def _partial_json(text: str) -> dict:
    """What a cut-off tool input parses to (the complete leading part), like the SDK's reading."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        import jiter

        try:
            return jiter.from_json(text.encode("utf-8"), partial_mode=True)
        except ValueError:
            return {}


def assemble(events: list[tuple[str, dict]]) -> dict:
    """The complete message a sequence of (name, data) stream events describes."""
    message: dict = {}
    buffers: dict[int, str] = {}
    for name, data in events:
        if name == "message_start":
            message = json.loads(json.dumps(data["message"]))
        elif name == "content_block_start":
            message["content"].append(json.loads(json.dumps(data["content_block"])))
        elif name == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                buffers[data["index"]] = buffers.get(data["index"], "") + delta["partial_json"]
        elif name == "message_delta":
            message.update(data["delta"])
            message.setdefault("usage", {}).update(data.get("usage") or {})
    for index, text in buffers.items():
        message["content"][index]["input"] = _partial_json(text)
    return message
