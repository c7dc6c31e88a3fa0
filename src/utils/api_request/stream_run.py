"""The one stream runner, for every provider: raw events in, our StreamEvents out.

The adapter opens the stream and translates its raw events into neutral `Delta`s; everything
else is decided here, once for all providers:
- Bounds a misbehaving server cannot talk us out of: the answer's text (and tool arguments) is
  capped at `MAX_STREAM_CHARS`, the number of raw events at `max_tokens * 4 + 1024`, and the whole
  stream has a deadline of `DEADLINE_FACTOR` times the request timeout, so an endless stream ends
  with an error instead of a hang.
- The end, checked in this order: the provider's end marker arrived → `done`; else cancelled →
  `done` (stop_reason "cancelled", the partial text; a cancel wins over the error its own abort
  causes); else a failure → `error`; else a stop reason arrived and the body ended cleanly (no
  end marker: recorded Anthropic streams, OpenAI-compatible streams) → `done`; else the stream
  broke off → `connection_error`.
- Tool calls of a turn stopped by `max_tokens` or by a cancel are all reported in
  `invalid_tool_calls`, never offered to run (the non-streaming loop never runs part of a cut
  turn either).
Cancelling shuts the socket (`cancel.watch_cancel`), so a reader blocked on the next delta wakes.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..text import scrub
from .adapter import Delta, ProviderAdapter
from .cancel import cancelled, watch_cancel
from .errors import ApiFailure
from .streaming import ToolCallStreamHandler
from .types import (
    ChunkResponse,
    RequestConfig,
    SegmentEvent,
    SentRequest,
    StreamEvent,
    ToolResult,
)

log = logging.getLogger(__name__)

CANCELLED = "cancelled"
MAX_STREAM_CHARS = 2_000_000
DEADLINE_FACTOR = 10
CUT_OFF = "The tool call was cut off."


def error_event(problem: ApiFailure) -> StreamEvent:
    """The one `error` event that ends a failed stream."""
    return StreamEvent("error", {"code": problem.code, "message": problem.message,
                                 "retryable": problem.retryable})


class _OutOfBounds(Exception):
    """The stream broke one of the bounds above."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code, self.detail = code, detail


class _StreamState:
    """The running state of one stream: text so far, usage, stop reason, tool calls, bounds."""

    def __init__(self, with_tools: bool, max_tokens: int, deadline: float):
        self.parts: list[str] = []
        self.chars = 0
        self.events = 0
        self.max_events = max_tokens * 4 + 1024
        self.deadline = deadline
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.complete = False
        self.tools = ToolCallStreamHandler() if with_tools else None

    def check_bounds(self) -> None:
        """Counts one raw event; raises once the stream is too long, too large or too late."""
        self.events += 1
        if self.chars > MAX_STREAM_CHARS or self.events > self.max_events:
            raise _OutOfBounds("response_too_large", f"{self.events} events, {self.chars} characters")
        if time.monotonic() > self.deadline:
            raise _OutOfBounds("timeout", "the stream did not end in time")

    def apply(self, delta: Delta) -> list[StreamEvent]:
        """The events one delta produces, its state recorded."""
        out: list[StreamEvent] = []
        if delta.text:
            text = scrub(delta.text)
            self.parts.append(text)
            self.chars += len(text)
            out.append(StreamEvent("chunk", text))
        if delta.tool is not None and self.tools is not None:
            self.chars += len(delta.tool.arguments_delta or "")
            out += _segments(self.tools.feed(ChunkResponse(tool_calls=[delta.tool])))
        if delta.close_tool is not None and self.tools is not None:
            out += _segments(self.tools.close_tool(delta.close_tool))
        if delta.usage is not None:
            self.usage = dict(delta.usage)
        self.stop_reason = delta.stop_reason or self.stop_reason
        self.complete = self.complete or delta.complete
        return out

    def finish(self, stop_reason: str | None) -> list[StreamEvent]:
        """The closing events: tool segments still open, then `done`."""
        data: dict[str, Any] = {"text": "".join(self.parts), "usage": self.usage,
                                "stop_reason": stop_reason}
        if self.tools is None:
            return [StreamEvent("done", data)]
        closing = _segments(self.tools.finalize())
        cut = stop_reason in ("max_tokens", CANCELLED)
        invalid = list(self.tools.invalid_calls)
        if cut:
            invalid += [ToolResult.error(call.id, call.name, CUT_OFF) for call in self.tools.tool_calls]
        data.update(tool_calls=[] if cut else list(self.tools.tool_calls),
                    invalid_tool_calls=invalid)
        return [*closing, StreamEvent("done", data)]

    def end(self, problem: ApiFailure | None, cancel: threading.Event | None,
            broken: Callable[[], ApiFailure]) -> list[StreamEvent]:
        """The end of the stream, in the one order described in the module docstring
        (`broken` builds the failure of a stream cut short: only then, since masking its
        text costs a scan on every turn)."""
        if self.complete:
            return self.finish(self.stop_reason)
        if cancelled(cancel):
            return self.finish(CANCELLED)
        if problem is not None:
            return [error_event(problem)]
        if self.stop_reason:
            return self.finish(self.stop_reason)
        log.warning("the response stream ended before it was complete")
        return [error_event(broken())]


def _segments(events: list[SegmentEvent]) -> list[StreamEvent]:
    return [StreamEvent("segment", event) for event in events if event.segment_type == "tool_call"]


def _report_sent(adapter: ProviderAdapter, config: RequestConfig, model: str, raw: Any) -> None:
    """Hands the body as sent (`raw.sent()`, the SDK's own bytes) to `config.on_sent`; a failure
    to record it is logged and never breaks the reply."""
    sent = getattr(raw, "sent", None)
    if config.on_sent is None or sent is None:
        return
    try:
        config.on_sent(SentRequest(getattr(adapter, "provider", "unknown"), model, sent()))
    except Exception:
        log.exception("Could not record the request a stream sent")


def run_stream(adapter: ProviderAdapter, config: RequestConfig, model: str,
               cancel: threading.Event | None) -> Iterator[StreamEvent]:
    """Yields `chunk`s (and tool `segment`s) as they arrive, then exactly one `done` or `error`."""
    state = _StreamState(bool(config.tools), config.max_tokens,
                         time.monotonic() + adapter.timeout * DEADLINE_FACTOR)
    if cancelled(cancel):
        yield from state.finish(CANCELLED)
        return
    try:
        raw = adapter.open_stream(adapter.body(config, model, config.tools))
    except Exception as exc:
        yield error_event(adapter.failure(exc))
        return
    _report_sent(adapter, config, model, raw)
    watch = watch_cancel(cancel, raw.abort)
    problem: ApiFailure | None = None
    try:
        translator = adapter.translator()
        for event in raw.events():
            state.check_bounds()
            for delta in translator.feed(event):
                yield from state.apply(delta)
            if cancelled(cancel) and not state.complete:
                break
    except _OutOfBounds as bound:
        problem = adapter.problem(bound.code, bound.detail)
    except Exception as exc:
        problem = adapter.failure(exc)
    finally:
        if watch is not None:
            watch.stop()
        raw.close()
    yield from state.end(problem, cancel, lambda: adapter.problem(
        "connection_error", "the answer ended before it was complete"))
