"""Message and HTTP-error replies for FakeClaude (the reply API is `tests.fakes.replies`).

A reply is served through an exchange (see `tests/fakes/exchange.py`) and reads the request's
`stream` flag itself, so one script works for `messages.create()` and `messages.stream()` alike.
"""
import json
import re
from collections.abc import Iterable

from tests.fakes import sse

ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}
CREDIT_MESSAGE = ("Your credit balance is too low to access the Anthropic API. "
                  "Please go to Plans & Billing to upgrade or purchase credits.")
_SIZES = (4, 9, 3, 13, 6, 2, 10)


class Reply:
    """Something the fake answers one request with."""

    def serve(self, ex) -> None:
        """Answer the exchange `ex` (write status, headers and body)."""
        raise NotImplementedError


class Streamable(Reply):
    """A reply that is a list of SSE events; its JSON form is those events assembled."""

    event_delay = 0.0

    def events(self, ex) -> list[bytes]:
        """The raw SSE events this reply streams."""
        raise NotImplementedError

    def message(self, ex) -> dict:
        """The JSON message (the events assembled)."""
        return sse.assemble([sse.parse(raw) for raw in self.events(ex) if sse.parse(raw)[1]])

    def serve(self, ex) -> None:
        if ex.stream:
            stream_events(ex, self.events(ex), self.event_delay)
        else:
            ex.send_json(200, self.message(ex))


def stream_events(ex, events: Iterable[bytes], delay: float = 0.0, finish: bool = True) -> bool:
    """Write events one per chunk (flushed), `delay` apart; False once the client is gone."""
    ex.start_stream()
    for position, raw in enumerate(events):
        if position and delay and not ex.pause(delay):
            return False
        if not ex.write(raw):
            return False
    if finish:
        ex.end_stream()
    return True


def _text_chunks(text: str) -> list[str]:
    words = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
    return ["".join(words[i:i + 2]) for i in range(0, len(words), 2)]


def _fragments(text: str, sizes: Iterable[int] = _SIZES) -> list[str]:
    """JSON text split like the API splits tool input: an empty first piece, then odd cuts."""
    pieces, start, sizes = [""], 0, list(sizes)
    while start < len(text):
        size = sizes[(len(pieces) - 1) % len(sizes)]
        pieces.append(text[start:start + size])
        start += size
    return pieces


class Message(Streamable):
    """An assistant message: text and tool_use blocks, a stop_reason, usage."""

    def __init__(self, blocks, stop_reason, usage=None, event_delay=0.0, stop_sequence=None):
        self.blocks, self.stop_reason, self.stop_sequence = blocks, stop_reason, stop_sequence
        self.usage, self.event_delay = dict(usage or {}), event_delay
        self.ids: list[str] = []

    def parsed_events(self, ex) -> list[tuple[str, dict]]:
        """The (name, data) events; tool ids are fresh per serve and kept in `self.ids`."""
        start_usage = {**ex.usage_base, "output_tokens": 1}
        start_usage.update({k: v for k, v in self.usage.items() if k != "output_tokens"})
        out = [("message_start", {"type": "message_start", "message": {
            "id": sse.new_id("msg"), "type": "message", "role": "assistant", "model": ex.model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}})]
        self.ids, produced = [], 0
        for index, block in enumerate(self.blocks):
            events = self._block_events(index, block)
            out += events[:1] + ([("ping", {"type": "ping"})] if index == 0 else []) + events[1:]
            produced += len(block[1]) + len(block[2]) if block[0] == "tool_use" else len(block[1])
        output_tokens = self.usage.get("output_tokens", max(1, produced // 4))
        out.append(("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
            "usage": {"output_tokens": output_tokens}}))
        out.append(("message_stop", {"type": "message_stop"}))
        return out

    def _block_events(self, index, block) -> list[tuple[str, dict]]:
        if block[0] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in block[2]]
        else:
            _, name, text, tool_id, sizes = block
            tool_id = tool_id or sse.new_id("toolu")
            self.ids.append(tool_id)
            start = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": piece}
                      for piece in _fragments(text, sizes)]
        return ([("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": start})]
                + [("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": d}) for d in deltas]
                + [("content_block_stop", {"type": "content_block_stop", "index": index})])

    def events(self, ex) -> list[bytes]:
        return [sse.render(name, data) for name, data in self.parsed_events(ex)]

    def message(self, ex) -> dict:
        return sse.assemble(self.parsed_events(ex))


def text(content: str, chunks=None, stop_reason="end_turn", usage=None, event_delay=0.0,
         stop_sequence=None) -> Message:
    """A text answer; `chunks` are the text_delta pieces (default: two words each)."""
    pieces = list(chunks) if chunks is not None else _text_chunks(content)
    if "".join(pieces) != content:
        raise ValueError("fake: chunks must join to the text")
    return Message([("text", content, pieces)], stop_reason, usage, event_delay, stop_sequence)


def _tool_block(call, sizes) -> tuple:
    name, args, tool_id = (*call, None)[:3]
    raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return ("tool_use", name, raw, tool_id, sizes or _SIZES)


def tool_use(calls, text=None, stop_reason="tool_use", usage=None, event_delay=0.0,
             fragment_sizes=None) -> Message:
    """Tool calls [(name, input[, id]), ...]; input may be a raw JSON string (even invalid)."""
    calls = [calls] if isinstance(calls, tuple) and isinstance(calls[0], str) else calls
    blocks = [("text", text, _text_chunks(text))] if text else []
    blocks += [_tool_block(call, fragment_sizes) for call in calls]
    return Message(blocks, stop_reason, usage, event_delay)


def truncated_tool_use(name, partial_json, text=None, usage=None, event_delay=0.0) -> Message:
    """A tool call cut off by max_tokens: partial input JSON, stop_reason max_tokens."""
    return tool_use([(name, partial_json)], text, "max_tokens", usage, event_delay)


class HttpError(Reply):
    """An HTTP error with the API's error body (and optional retry-after headers)."""

    def __init__(self, status, error_type, message, retry_after=None, retry_after_ms=None,
                 headers=None):
        self.status, self.error_type, self.message = status, error_type, message
        self.headers = dict(headers or {})
        if retry_after is not None:
            self.headers["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            self.headers["retry-after-ms"] = str(retry_after_ms)

    def serve(self, ex) -> None:
        ex.send_error(self.status, self.error_type, self.message, self.headers)


def http_error(status, error_type, message, retry_after=None, retry_after_ms=None, headers=None):
    """Answer with HTTP `status` and `{"type": "error", "error": {type, message}, request_id}`."""
    return HttpError(status, error_type, message, retry_after, retry_after_ms, headers)


def bad_request(message="Invalid request"):
    """400 invalid_request_error."""
    return http_error(400, "invalid_request_error", message)


def authentication_error(message="invalid x-api-key"):
    """401 authentication_error, as for a wrong API key."""
    return http_error(401, "authentication_error", message)


def credit_exhausted(message=CREDIT_MESSAGE):
    """400 invalid_request_error with the API's "credit balance is too low" message."""
    return http_error(400, "invalid_request_error", message)


def rate_limited(message="Number of request tokens has exceeded your per-minute rate limit",
                 retry_after=None, retry_after_ms=None):
    """429 rate_limit_error."""
    return http_error(429, "rate_limit_error", message, retry_after, retry_after_ms)


def server_error(message="Internal server error"):
    """500 api_error."""
    return http_error(500, "api_error", message)


def overloaded(message="Overloaded", retry_after=None, retry_after_ms=None):
    """529 overloaded_error."""
    return http_error(529, "overloaded_error", message, retry_after, retry_after_ms)

