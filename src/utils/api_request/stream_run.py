"""Runs one streaming request and translates the SDK's raw events into our StreamEvents.

We read the raw response (`raw_stream.py`: the SDK's `with_streaming_response`, events decoded
as dicts the way the SDK's iterator decodes them) rather than the SDK's `MessageStream`, which
rebuilds a message snapshot on every event, or its event iterator, which builds a model per event. A stream only
counts as complete when `message_stop` arrived, or the body ended cleanly after `message_delta`
gave the stop reason (recorded API streams lack the blank line after their last event, so the
SDK never yields their `message_stop`); anything else is a broken connection. Cancelling
shuts the socket (from the cancelling thread for a `CancelSignal`, else from a watcher thread),
so a reader blocked waiting for the next delta wakes at once and the server sees us leave.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Iterator

from ..text import scrub
from . import raw_stream
from .anthropic import chunk_from_event, usage_dict
from .cancel import CancelSignal
from .errors import ApiFailure, failure, from_exception
from .sdk import abort_connection
from .streaming import ToolCallStreamHandler
from .types import ChunkResponse, StreamEvent, ToolResult

log = logging.getLogger(__name__)

CANCELLED = "cancelled"
_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def error_event(problem: ApiFailure) -> StreamEvent:
    """The one `error` event that ends a failed stream."""
    return StreamEvent("error", {"code": problem.code, "message": problem.message,
                                 "retryable": problem.retryable})


class _CancelWatcher:
    """Aborts the upstream response as soon as `cancel` is set, until told the stream is over."""

    POLL_SECONDS = 0.05

    def __init__(self, cancel: threading.Event, response: Any):
        self._cancel = cancel
        self._response = response
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stream-cancel", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._finished.is_set():
            if self._cancel.wait(self.POLL_SECONDS):
                if not self._finished.is_set():
                    log.info("stream cancelled: closing the upstream connection")
                    abort_connection(self._response)
                return

    def stop(self) -> None:
        """The stream is over; the watcher thread ends within one poll."""
        self._finished.set()


class _CancelHook:
    """The same for a CancelSignal: the abort runs in the thread that sets it, no thread here."""

    def __init__(self, cancel: CancelSignal, response: Any):
        self._lock = threading.Lock()
        self._finished = False
        self._response = response
        self._remove = cancel.on_set(self._abort)

    def _abort(self) -> None:
        with self._lock:
            if not self._finished:
                log.info("stream cancelled: closing the upstream connection")
                abort_connection(self._response)

    def stop(self) -> None:
        """The stream is over; a later cancel no longer touches the connection."""
        with self._lock:
            self._finished = True
        self._remove()


def _watch_cancel(cancel: threading.Event | None, response: Any):
    if cancel is None:
        return None
    if isinstance(cancel, CancelSignal):
        return _CancelHook(cancel, response)
    return _CancelWatcher(cancel, response)


class _Translation:
    """The running state of one stream: text so far, usage, stop reason, tool calls."""

    def __init__(self, with_tools: bool):
        self.parts: list[str] = []
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.complete = False
        self.last_block: int | None = None
        self.tools = ToolCallStreamHandler() if with_tools else None

    def feed(self, event: dict) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "content_block_delta" and self.tools is None:
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                text = scrub(delta.get("text") or "")
                self.parts.append(text)
                return [StreamEvent("chunk", text)]
        if kind == "message_start":
            self.usage = usage_dict((event.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason")
            self._update_usage(event.get("usage") or {})
        elif kind == "message_stop":
            self.complete = True
        elif kind == "content_block_stop":
            self.last_block = event.get("index")
            if self.tools is not None:
                return _segments(self.tools.close_tool(event.get("index")))
        else:
            return self._content(chunk_from_event(event))
        return []

    def _content(self, chunk: ChunkResponse | None) -> list[StreamEvent]:
        if chunk is None:
            return []
        out = []
        if chunk.content:
            self.parts.append(chunk.content)
            out.append(StreamEvent("chunk", chunk.content))
        if self.tools is not None:
            out.extend(_segments(self.tools.feed(chunk)))
        return out

    def _update_usage(self, usage: dict) -> None:
        """`message_delta` has the final output count; other counters only when it reports them."""
        if isinstance(usage.get("output_tokens"), int):
            self.usage["output_tokens"] = usage["output_tokens"]
        for key in _INPUT_KEYS:
            if usage.get(key):
                self.usage[key] = usage[key]

    def finish(self, stop_reason: str | None) -> list[StreamEvent]:
        """The closing events: tool segments still open, then `done`.

        A call cut off by `max_tokens` (the last block) or by a cancel (blocks never stopped) is
        reported in `invalid_tool_calls`, never offered to run.
        """
        data = {"text": "".join(self.parts), "usage": self.usage, "stop_reason": stop_reason}
        if self.tools is None:
            return [StreamEvent("done", data)]
        cut = set(self.tools.open_indexes) if stop_reason == CANCELLED else set()
        if stop_reason == "max_tokens" and self.last_block is not None:
            cut.add(self.last_block)
        closing = _segments(self.tools.finalize())
        calls, invalid = [], list(self.tools.invalid_calls)
        for call in self.tools.tool_calls:
            if self.tools.call_index.get(call.id) in cut:
                invalid.append(ToolResult.error(call.id, call.name, "The tool call was cut off."))
            else:
                calls.append(call)
        data.update(tool_calls=calls, invalid_tool_calls=invalid)
        return [*closing, StreamEvent("done", data)]


def _cancelled(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def _segments(events) -> list[StreamEvent]:
    return [StreamEvent("segment", event) for event in events if event.segment_type == "tool_call"]


def run_stream(sdk: Any, kwargs: dict, cancel: threading.Event | None, with_tools: bool,
               secret: str | None) -> Iterator[StreamEvent]:
    """Yields `chunk`s (and tool `segment`s) as they arrive, then exactly one `done` or `error`."""
    state = _Translation(with_tools)
    if _cancelled(cancel):
        yield from state.finish(CANCELLED)
        return
    opened = raw_stream.open_stream(sdk, kwargs)
    try:
        response = opened.__enter__().http_response
    except Exception as exc:
        yield error_event(from_exception(exc, secret))
        return
    watcher = _watch_cancel(cancel, response)
    problem: ApiFailure | None = None
    try:
        for event in raw_stream.events(response):
            yield from state.feed(event)
            if _cancelled(cancel) and not state.complete:
                break
    except Exception as exc:
        problem = from_exception(exc, secret)
    finally:
        if watcher is not None:
            watcher.stop()
        opened.__exit__(None, None, None)
    if state.complete or (problem is None and state.stop_reason and not _cancelled(cancel)):
        yield from state.finish(state.stop_reason)
    elif _cancelled(cancel):
        yield from state.finish(CANCELLED)
    elif problem is not None:
        yield error_event(problem)
    else:
        log.warning("the response stream ended without message_stop")
        yield error_event(failure("connection_error", "the answer ended before it was complete"))
