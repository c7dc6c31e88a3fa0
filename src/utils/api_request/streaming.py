"""Builds tool calls from streamed pieces and turns a stream into text and tool-call segments.

Provider converters produce `ToolCallDelta`s; everything here is provider-neutral. A call is
complete when its block stops or the stream ends; arguments that are not a JSON object become an
error `ToolResult` for that call (never an exception), so the model can be told what went wrong.
"""
from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from .types import ChunkResponse, SegmentEvent, ToolCall, ToolCallDelta, ToolResult

log = logging.getLogger(__name__)

Completed = ToolCall | ToolResult


@dataclass
class _Pending:
    call_id: str = ""
    name: str = ""
    fragments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Collects tool-call pieces per index until each call is complete."""

    def __init__(self) -> None:
        self._pending: dict[int, _Pending] = {}

    @property
    def has_pending(self) -> bool:
        """Whether some call has started but not completed."""
        return bool(self._pending)

    def add(self, delta: ToolCallDelta) -> None:
        """Adds one piece; id and name are kept from whichever piece carries them."""
        pending = self._pending.setdefault(delta.index, _Pending())
        if delta.call_id:
            pending.call_id = delta.call_id
        if delta.name:
            pending.name = delta.name
        if delta.arguments_delta:
            pending.fragments.append(delta.arguments_delta)

    def arguments_so_far(self, index: int) -> str:
        """The raw argument text received so far for `index`."""
        pending = self._pending.get(index)
        return "".join(pending.fragments) if pending else ""

    def complete(self, index: int) -> Completed | None:
        """Completes the call at `index` (its block stopped); None if nothing was pending there."""
        pending = self._pending.pop(index, None)
        return _finish(pending) if pending else None

    def finish(self) -> list[Completed]:
        """Completes every call still pending (the stream ended), in index order."""
        done = [_finish(self._pending[index]) for index in sorted(self._pending)]
        self._pending.clear()
        return [item for item in done if item is not None]


def _finish(pending: _Pending) -> Completed | None:
    if not pending.call_id:
        log.warning("dropping a streamed tool call without an id (tool %r)", pending.name)
        return None
    raw = "".join(pending.fragments).strip()
    try:
        arguments = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        return ToolResult.error(pending.call_id, pending.name,
                                f"The arguments for {pending.name} were not valid JSON ({exc.msg}).")
    if not isinstance(arguments, dict):
        return ToolResult.error(pending.call_id, pending.name,
                                f"The arguments for {pending.name} must be a JSON object.")
    return ToolCall(pending.call_id, pending.name, arguments)


class ToolCallStreamHandler:
    """Turns ChunkResponses into text and tool-call SegmentEvents and collects the finished calls."""

    def __init__(self, on_event: Callable[[SegmentEvent], None] | None = None, id_prefix: str = ""):
        self._on_event = on_event
        self._id_prefix = id_prefix
        self._accumulator = ToolCallAccumulator()
        self._text_segment: str | None = None
        self._tool_segments: dict[int, tuple[str, str]] = {}
        self.events: list[SegmentEvent] = []
        self.tool_calls: list[ToolCall] = []
        self.invalid_calls: list[ToolResult] = []
        self.call_index: dict[str, int] = {}
        self._finalized = False

    @property
    def open_indexes(self) -> list[int]:
        """Indexes of tool calls whose segment has started but not ended."""
        return sorted(self._tool_segments)

    def feed(self, chunk: ChunkResponse) -> list[SegmentEvent]:
        """Processes one chunk and returns the events it produced."""
        if self._finalized:
            raise RuntimeError("the handler was finalized")
        out: list[SegmentEvent] = []
        if chunk.content:
            if self._text_segment is None:
                self._text_segment = self._new_id()
                self._emit(out, SegmentEvent("start", self._text_segment, "text"))
            self._emit(out, SegmentEvent("content", self._text_segment, "text", {"delta": chunk.content}))
        for delta in chunk.tool_calls or ():
            self._feed_delta(delta, out)
        if chunk.is_complete:
            out.extend(self.finalize())
        return out

    def _feed_delta(self, delta: ToolCallDelta, out: list[SegmentEvent]) -> None:
        self._accumulator.add(delta)
        if delta.call_id:
            self.call_index[delta.call_id] = delta.index
        if delta.index not in self._tool_segments:
            segment_id = delta.call_id or self._new_id()
            self._tool_segments[delta.index] = (segment_id, delta.name or "")
            self._emit(out, SegmentEvent("start", segment_id, "tool_call",
                                         {"tool_name": delta.name, "call_id": delta.call_id}))
        if delta.arguments_delta:
            segment_id = self._tool_segments[delta.index][0]
            self._emit(out, SegmentEvent("content", segment_id, "tool_call",
                                         {"delta": delta.arguments_delta}))

    def close_tool(self, index: int) -> list[SegmentEvent]:
        """Ends the tool segment at `index` (its block stopped) with the parsed arguments."""
        out: list[SegmentEvent] = []
        segment = self._tool_segments.pop(index, None)
        completed = self._accumulator.complete(index)
        if segment is not None:
            self._end_tool(segment[0], completed, out)
        return out

    def finalize(self) -> list[SegmentEvent]:
        """Ends every open segment; calls still pending are completed as the stream is over."""
        if self._finalized:
            return []
        self._finalized = True
        out: list[SegmentEvent] = []
        if self._text_segment is not None:
            self._emit(out, SegmentEvent("end", self._text_segment, "text"))
        for index in sorted(self._tool_segments):
            self._end_tool(self._tool_segments[index][0], self._accumulator.complete(index), out)
        self._tool_segments.clear()
        return out

    def _end_tool(self, segment_id: str, completed: Completed | None, out: list[SegmentEvent]) -> None:
        if isinstance(completed, ToolCall):
            self.tool_calls.append(completed)
            payload = {"tool_name": completed.name, "call_id": completed.id,
                       "arguments": completed.arguments}
        elif isinstance(completed, ToolResult):
            self.invalid_calls.append(completed)
            payload = {"tool_name": completed.name, "call_id": completed.tool_call_id,
                       "error": completed.content}
        else:
            payload = {"error": "The tool call had no id and was dropped."}
        self._emit(out, SegmentEvent("end", segment_id, "tool_call", payload))

    def _emit(self, out: list[SegmentEvent], event: SegmentEvent) -> None:
        self.events.append(event)
        out.append(event)
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                log.exception("segment event callback failed")

    def _new_id(self) -> str:
        return f"{self._id_prefix}{uuid.uuid4().hex}"
