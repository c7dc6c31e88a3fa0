"""FakeJsonl: a toy model server speaking a tiny JSON-lines protocol, for the toy adapter.

It proves that a third provider is one adapter file (tests/api_request/toy_adapter.py): the same
reply builders as FakeClaude (`tests.fakes.replies`) are served, translated on the wire.

    POST /toy {"model", "system", "messages", "tools", "limit", "stream"}
    messages: {"role": "user", "text"} | {"role": "assistant", "text", "calls": [{id, name, args}]}
              | {"role": "tool", "id", "result", "error"}
    answer:   {"text", "calls", "stop", "usage": {"in", "out"}}
    stream:   one JSON object per line: {"text"} | {"call": i, "id", "name"} | {"call": i, "args"}
              | {"stop", "usage"} | {"end": true} | {"error": {"code", "message"}}
    errors:   HTTP status with {"error": {"code", "message"}}
"""
import json

from tests.fakes import sse
from tests.fakes.claude import NOTHING_SCRIPTED, FakeClaude

__all__ = ["FakeJsonl"]


class FakeJsonl(FakeClaude):
    """The toy protocol on 127.0.0.1:<free port>/toy (replies scripted as for FakeClaude)."""

    def _route(self, ex, record) -> None:
        if (ex.method, ex.path) != ("POST", "/toy"):
            record.rejected = "fake: no route"
            ex.send_json(404, {"error": {"code": "not_found", "message": "no route"}})
            return
        message = _history_problem(ex.body) if self.validate else None
        if message is not None:
            record.rejected = message
            ex.send_json(400, {"error": {"code": "invalid_request", "message": message}})
            return
        with self._cond:
            reply = self._queue.popleft() if self._queue else self.default
        if reply is None:
            record.rejected = NOTHING_SCRIPTED
            ex.send_json(500, {"error": {"code": "api_error", "message": NOTHING_SCRIPTED}})
            return
        reply.serve(_JsonlExchange(ex))


def _history_problem(body) -> str | None:
    """Every assistant turn's calls are answered, in order, by the tool messages after it."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return "messages: a non-empty list is required"
    for position, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        wanted = [call["id"] for call in message.get("calls") or ()]
        answers = messages[position + 1:position + 1 + len(wanted)]
        if [answer.get("id") for answer in answers if answer.get("role") == "tool"] != wanted:
            return f"messages[{position}]: every call needs its tool message, in order"
    return None


class _JsonlExchange:
    """Wraps an Exchange: Messages API output goes out as toy lines."""

    def __init__(self, ex):
        self._ex = ex
        self._calls: set[int] = set()

    def __getattr__(self, name):
        return getattr(self._ex, name)

    def send_json(self, status: int, obj, headers=None) -> bool:
        if status == 200 and isinstance(obj, dict) and obj.get("type") == "message":
            blocks = obj["content"]
            obj = {"text": "".join(b.get("text", "") for b in blocks if b["type"] == "text"),
                   "calls": [{"id": b["id"], "name": b["name"], "args": b["input"]}
                             for b in blocks if b["type"] == "tool_use"],
                   "stop": obj["stop_reason"], "usage": _usage(obj["usage"])}
        return self._ex.send_json(status, obj, headers)

    def send_error(self, status: int, error_type: str, message: str, headers=None) -> None:
        body = {"error": {"code": error_type, "message": message}}
        if not self._ex.started:
            self._ex.send_json(status, body, headers)
        elif self._ex.write(_line(body)):
            self._ex.end_stream()

    def drop_json(self, obj) -> None:
        self._ex.drop_json(obj)

    def write(self, raw: bytes) -> bool:
        name, data = sse.parse(raw)
        line = self._translate(name, data or {})
        return True if line is None else self._ex.write(_line(line))

    def _translate(self, name, data) -> dict | None:
        if name == "error":
            return {"error": {"code": data["error"]["type"], "message": data["error"]["message"]}}
        if name == "content_block_start" and data["content_block"]["type"] == "tool_use":
            self._calls.add(data["index"])
            block = data["content_block"]
            return {"call": data["index"], "id": block["id"], "name": block["name"]}
        if name == "content_block_delta" and data["delta"]["type"] == "text_delta":
            return {"text": data["delta"]["text"]}
        if name == "content_block_delta" and data["delta"].get("partial_json"):
            return {"call": data["index"], "args": data["delta"]["partial_json"]}
        if name == "message_delta":
            return {"stop": data["delta"]["stop_reason"], "usage": _usage(data["usage"])}
        if name == "message_stop":
            return {"end": True}
        return None


def _usage(usage: dict) -> dict:
    return {"in": usage.get("input_tokens", 1), "out": usage.get("output_tokens", 1)}


def _line(obj) -> bytes:
    return json.dumps(obj).encode("utf-8") + b"\n"
