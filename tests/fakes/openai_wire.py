"""Serving FakeClaude's replies as Chat Completions: an exchange that translates on the wire.

Every reply builder of `tests.fakes.replies` (text, tool_use, gated, drop, stream_error, ...)
writes Messages API events; `OpenAIExchange` turns each into `data: {chunk}` lines (and
`data: [DONE]`), a JSON message into a `chat.completion`, an error into the body shape of the
chosen server family. Quirk switches change the translation the way real servers misbehave.
"""
import json
import time

from tests.fakes import sse

FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length",
          "stop_sequence": "stop", "refusal": "content_filter"}
STATUS_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "server_error"}


def error_body(style: str, status: int, message: str, kind: str | None = None) -> object:
    """An error body as the family `style` writes it."""
    kind = kind or STATUS_TYPES.get(status, "server_error")
    if style == "ollama":
        return {"error": message}
    if style == "vllm":
        return {"object": "error", "message": message, "type": kind, "param": None, "code": status}
    if style == "openrouter":
        return {"error": {"code": status, "message": message,
                          "metadata": {"provider_name": "FakeProvider", "raw": message}}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class OpenAIExchange:
    """Wraps an Exchange; Claude-shaped output goes out as Chat Completions."""

    def __init__(self, ex, fake, usage: dict):
        self._ex, self._fake, self._usage = ex, fake, usage
        self._id = sse.new_id("chatcmpl")
        self._tools: dict[int, int] = {}
        self._tool_text: dict[int, list] = {}
        self._finish = None

    def __getattr__(self, name):
        return getattr(self._ex, name)

    # -- JSON --
    def send_json(self, status: int, obj, headers=None) -> bool:
        if status == 200 and isinstance(obj, dict) and obj.get("type") == "message":
            obj = self._completion(obj)
        return self._ex.send_json(status, obj, headers)

    def send_error(self, status: int, error_type: str, message: str, headers=None) -> None:
        if status == 529:
            status = 503
        if "credit balance" in message:
            status = 402  # how OpenRouter and OpenAI say "no credit left"
        body = error_body(self._fake.error_style, status, message, error_type)
        if not self._ex.started:
            self._ex.send_json(status, body, headers)
        elif self._ex.write(self._line(body if isinstance(body.get("error"), dict) else
                                       {"error": {"message": message}})):
            self._ex.end_stream()

    def drop_json(self, obj) -> None:
        self._ex.drop_json(self._completion(obj) if obj.get("type") == "message" else obj)

    def _completion(self, message: dict) -> dict:
        text = "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                 for b in message["content"] if b["type"] == "tool_use"]
        finish = FINISH.get(message.get("stop_reason"), "stop")
        if calls and "tool_as_text" in self._fake.quirks:
            text, finish = json.dumps({"name": calls[0]["function"]["name"],
                                       "arguments": json.loads(calls[0]["function"]["arguments"])}), "stop"
            calls = []
        out = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return {"id": self._id, "object": "chat.completion", "created": int(time.time()),
                "model": self._ex.model, "choices": [{"index": 0, "message": out,
                                                       "finish_reason": finish}],
                "usage": self._usage_obj(message["usage"].get("output_tokens", 1))}

    def _usage_obj(self, output: int) -> dict:
        usage = {"prompt_tokens": self._usage["prompt"], "completion_tokens": output,
                 "total_tokens": self._usage["prompt"] + output}
        if self._usage.get("cached"):
            usage["prompt_tokens_details"] = {"cached_tokens": self._usage["cached"]}
        return usage

    # -- streams --
    def write(self, raw: bytes) -> bool:
        name, data = sse.parse(raw)
        if name == "error":
            return self._ex.write(self._line({"error": {**data["error"],
                                                        "code": data["error"]["type"]}}))
        for chunk in self._chunks(name, data):
            if not self._write_raw(chunk if isinstance(chunk, bytes) else self._line(chunk)):
                return False
        return True

    def _write_raw(self, data: bytes) -> bool:
        if "byte_split" in self._fake.quirks and len(data) > 2:
            cut = next((i for i, b in enumerate(data) if b >= 0xC0), len(data) // 2) + 1
            return self._ex.write(data[:cut]) and self._ex.write(data[cut:])
        return self._ex.write(data)

    @staticmethod
    def _line(obj) -> bytes:
        return b"data: " + sse.dumps(obj).encode("utf-8") + b"\n\n"

    def _chunk(self, delta: dict, finish=None) -> dict:
        return {"id": self._id, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": self._ex.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def _chunks(self, name, data) -> list:
        quirks = self._fake.quirks
        if name == "message_start":
            return [self._chunk({"role": "assistant", "content": ""})]
        if name == "content_block_start" and data["content_block"]["type"] == "tool_use":
            return self._tool_start(data["index"], data["content_block"])
        if name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                out = [self._chunk({"content": delta["text"]})]
                return [b"data: <p>not json</p>\n\n", *out] if "garbage_lines" in quirks else out
            return self._tool_piece(data["index"], delta["partial_json"])
        if name == "content_block_stop" and data["index"] in self._tool_text:
            call = self._tool_text.pop(data["index"])
            text = json.dumps({"name": call[0], "arguments": json.loads("".join(call[1]) or "{}")})
            return [self._chunk({"content": text})]
        if name == "message_delta":
            reason = FINISH.get(data["delta"]["stop_reason"], "stop")
            if "tool_as_text" in quirks and reason == "tool_calls":
                reason = "stop"
            self._finish = reason
            self._output = data["usage"]["output_tokens"]
            return [self._chunk({}, reason)]
        if name == "message_stop":
            return self._closing()
        return []

    def _closing(self) -> list:
        out = []
        options = (self._ex.body or {}).get("stream_options") or {}
        if options.get("include_usage") and "no_usage" not in self._fake.quirks:
            out.append({"id": self._id, "object": "chat.completion.chunk", "created": 0,
                        "model": self._ex.model, "choices": [],
                        "usage": self._usage_obj(getattr(self, "_output", 1))})
        if "no_done" not in self._fake.quirks:
            out.append(b"data: [DONE]\n\n")
        return out

    def _tool_start(self, block: int, content: dict) -> list:
        if "tool_as_text" in self._fake.quirks:
            self._tool_text[block] = (content["name"], [])
            return []
        position = len(self._tools)
        self._tools[block] = position
        call = {"id": content["id"], "type": "function",
                "function": {"name": content["name"], "arguments": ""}}
        return [self._chunk({"tool_calls": [self._indexed(position, call)]})]

    def _tool_piece(self, block: int, piece: str) -> list:
        if block in self._tool_text:
            self._tool_text[block][1].append(piece)
            return []
        if not piece:
            return []
        call = {"function": {"arguments": piece}}
        return [self._chunk({"tool_calls": [self._indexed(self._tools[block], call)]})]

    def _indexed(self, position: int, call: dict) -> dict:
        quirks = self._fake.quirks
        call = {key: value for key, value in call.items() if value is not None}
        if "no_index" in quirks:
            return call
        return {"index": 0 if "reused_index" in quirks else position, **call}
