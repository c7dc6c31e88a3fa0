"""Runs one streaming Chat Completions request and translates its chunks into our StreamEvents.

A stream counts as complete once a chunk carried a `finish_reason` (the usage-only chunk that
`stream_options.include_usage` adds may follow, then `data: [DONE]`); a body that ends before
that is a broken connection. Bounds a misbehaving server cannot talk us out of: the answer's
text is capped, the number of chunks is capped relative to `max_tokens`, and the whole stream
has a wall-clock deadline, so an endless stream without `[DONE]` ends with an error instead of
a hang. Cancelling shuts the upstream socket, as on the Anthropic path.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Iterator

from ..text import scrub
from .openai import DeltaIndexer, _get, stop_reason, usage_dict
from .openai_errors import failure, from_exception
from .stream_run import CANCELLED, _segments, _watch_cancel, error_event
from .streaming import ToolCallStreamHandler
from .types import ChunkResponse, StreamEvent, ToolResult

log = logging.getLogger(__name__)

MAX_STREAM_CHARS = 2_000_000
DEADLINE_FACTOR = 10


class _Limits(Exception):
    """The stream broke one of the bounds above."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code, self.detail = code, detail


class _Translation:
    """The running state of one stream: text, usage, finish reason, tool calls."""

    def __init__(self, with_tools: bool, max_tokens: int, deadline: float):
        self.parts: list[str] = []
        self.chars = 0
        self.chunks = 0
        self.max_chunks = max_tokens * 4 + 1024
        self.deadline = deadline
        self.usage: dict[str, int] = {}
        self.finish: str | None = None
        self.indexer = DeltaIndexer()
        self.tools = ToolCallStreamHandler() if with_tools else None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        self._check_bounds()
        usage = _get(chunk, "usage")
        if usage is not None:
            self.usage = usage_dict(usage)
        out: list[StreamEvent] = []
        for choice in (_get(chunk, "choices") or ())[:1]:
            delta = _get(choice, "delta")
            text = _get(delta, "content")
            if isinstance(text, str) and text:
                text = scrub(text)
                self.parts.append(text)
                self.chars += len(text)
                out.append(StreamEvent("chunk", text))
            calls = _get(delta, "tool_calls")
            if calls and self.tools is not None:
                deltas = self.indexer.deltas(calls)
                out.extend(_segments(self.tools.feed(ChunkResponse(tool_calls=deltas))))
            if _get(choice, "finish_reason"):
                self.finish = _get(choice, "finish_reason")
        return out

    def _check_bounds(self) -> None:
        self.chunks += 1
        if self.chars > MAX_STREAM_CHARS or self.chunks > self.max_chunks:
            raise _Limits("response_too_large", f"{self.chunks} chunks, {self.chars} characters")
        if time.monotonic() > self.deadline:
            raise _Limits("timeout", "the stream did not end in time")

    def finish_events(self, reason: str | None) -> list[StreamEvent]:
        """Tool segments still open, then `done`; a call cut by `length` or a cancel is invalid."""
        data = {"text": "".join(self.parts), "usage": self.usage, "stop_reason": reason}
        if self.tools is None:
            return [StreamEvent("done", data)]
        cut_all = reason in ("max_tokens", CANCELLED)
        closing = _segments(self.tools.finalize())
        calls, invalid = [], list(self.tools.invalid_calls)
        for call in self.tools.tool_calls:
            if cut_all:
                invalid.append(ToolResult.error(call.id, call.name, "The tool call was cut off."))
            else:
                calls.append(call)
        data.update(tool_calls=calls, invalid_tool_calls=invalid)
        return [*closing, StreamEvent("done", data)]


def _cancelled(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def run_stream(sdk: Any, kwargs: dict, cancel: threading.Event | None, with_tools: bool,
               secret: str | None, timeout: float) -> Iterator[StreamEvent]:
    """Yields `chunk`s (and tool `segment`s) as they arrive, then exactly one `done` or `error`."""
    state = _Translation(with_tools, int(kwargs.get("max_tokens") or
                                         kwargs.get("max_completion_tokens") or 1024),
                         time.monotonic() + timeout * DEADLINE_FACTOR)
    if _cancelled(cancel):
        yield from state.finish_events(CANCELLED)
        return
    try:
        upstream = sdk.chat.completions.create(stream=True, stream_options={"include_usage": True},
                                               **kwargs)
    except Exception as exc:
        yield error_event(from_exception(exc, secret))
        return
    watcher = _watch_cancel(cancel, upstream.response)
    problem = None
    try:
        kind = upstream.response.headers.get("content-type", "")
        if "html" in kind:
            raise _Limits("not_an_api", f"it sent {kind.split(';')[0]}")
        for chunk in upstream:
            yield from state.feed(chunk)
            if _cancelled(cancel):
                break
    except _Limits as exc:
        problem = failure(exc.code, exc.detail)
    except Exception as exc:
        problem = from_exception(exc, secret)
    finally:
        if watcher is not None:
            watcher.stop()
        upstream.close()
    if _cancelled(cancel) and not state.finish:
        yield from state.finish_events(CANCELLED)
    elif problem is not None:
        yield error_event(problem)
    elif state.finish:
        yield from state.finish_events(stop_reason(state.finish))
    else:
        log.warning("the response stream ended without a finish_reason")
        yield error_event(failure("connection_error", "the answer ended before it was complete"))
