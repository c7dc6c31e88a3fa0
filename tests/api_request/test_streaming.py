"""Streaming text and tool calls: the accumulator, the segment handler, and `stream()` with tools."""
import json

from src.utils.api_request import (
    ChunkResponse,
    RequestConfig,
    ToolCall,
    ToolCallAccumulator,
    ToolCallDelta,
    ToolCallStreamHandler,
    ToolResult,
)
from tests.api_request.conftest import TOOLS, user
from tests.fakes.claude import replies

ARGS = {"filename": "memory.md", "content": "Käse, \"Zitat\" und ünïcode 🎉\n- a\\b"}


def split(text, sizes):
    pieces, start, i = [], 0, 0
    while start < len(text):
        pieces.append(text[start:start + sizes[i % len(sizes)]])
        start += sizes[i % len(sizes)]
        i += 1
    return pieces


def test_accumulator_joins_fragments_split_mid_string_and_mid_escape():
    raw = json.dumps(ARGS, ensure_ascii=False)
    accumulator = ToolCallAccumulator()
    accumulator.add(ToolCallDelta(0, call_id="toolu_1", name="write_file"))
    for piece in split(raw, [1, 3, 2]):
        accumulator.add(ToolCallDelta(0, arguments_delta=piece))

    assert accumulator.has_pending
    assert accumulator.complete(0) == ToolCall("toolu_1", "write_file", ARGS)
    assert not accumulator.has_pending and accumulator.complete(0) is None


def test_accumulator_keeps_interleaved_parallel_calls_apart_and_finishes_in_index_order():
    accumulator = ToolCallAccumulator()
    accumulator.add(ToolCallDelta(1, call_id="b", name="read_file", arguments_delta='{"filen'))
    accumulator.add(ToolCallDelta(0, call_id="a", name="read_file", arguments_delta='{"filename": "so'))
    accumulator.add(ToolCallDelta(1, arguments_delta='ame": "memory.md"}'))
    accumulator.add(ToolCallDelta(0, arguments_delta='ul.md"}'))

    assert accumulator.finish() == [ToolCall("a", "read_file", {"filename": "soul.md"}),
                                    ToolCall("b", "read_file", {"filename": "memory.md"})]


def test_invalid_or_non_object_arguments_become_error_results_not_exceptions():
    accumulator = ToolCallAccumulator()
    accumulator.add(ToolCallDelta(0, call_id="a", name="write_file", arguments_delta='{"filename": mem'))
    accumulator.add(ToolCallDelta(1, call_id="b", name="write_file", arguments_delta='["a list"]'))
    accumulator.add(ToolCallDelta(2, call_id="c", name="noop"))
    accumulator.add(ToolCallDelta(3, name="no_id", arguments_delta="{}"))

    first, second, third = accumulator.finish()

    assert isinstance(first, ToolResult) and first.is_error and first.tool_call_id == "a"
    assert "not valid JSON" in first.content
    assert isinstance(second, ToolResult) and "JSON object" in second.content
    assert third == ToolCall("c", "noop", {})


def test_handler_emits_text_and_tool_segments_and_collects_calls():
    seen = []
    handler = ToolCallStreamHandler(on_event=seen.append)
    handler.feed(ChunkResponse(content="Let me "))
    handler.feed(ChunkResponse(content="write."))
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, call_id="t1", name="write_file")]))
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta='{"filename": "mem')]))
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, arguments_delta='ory.md", "content": ""}')]))
    closed = handler.close_tool(0)
    handler.feed(ChunkResponse(is_complete=True))

    kinds = [(e.event_type, e.segment_type) for e in handler.events]
    assert kinds == [("start", "text"), ("content", "text"), ("content", "text"),
                     ("start", "tool_call"), ("content", "tool_call"), ("content", "tool_call"),
                     ("end", "tool_call"), ("end", "text")]
    assert closed[0].payload == {"tool_name": "write_file", "call_id": "t1",
                                 "arguments": {"filename": "memory.md", "content": ""}}
    assert handler.tool_calls == [ToolCall("t1", "write_file", {"filename": "memory.md", "content": ""})]
    assert seen == handler.events


def test_handler_reports_an_invalid_call_at_finalize():
    handler = ToolCallStreamHandler()
    handler.feed(ChunkResponse(tool_calls=[ToolCallDelta(0, "t1", "write_file", '{"file')]))
    events = handler.finalize()

    assert events[-1].payload["error"].startswith("The arguments for write_file")
    assert handler.tool_calls == [] and handler.invalid_calls[0].tool_call_id == "t1"


def tool_config(**overrides):
    return RequestConfig(system_prompt="s", messages=user(), tools=TOOLS, **overrides)


def test_stream_text_chunks_arrive_in_order_then_one_done(api, claude):
    claude.enqueue(replies.text("Hello there, friend!", chunks=["Hel", "lo there", ", friend!"]))

    events = list(api.stream(RequestConfig(system_prompt="s", messages=user())))

    assert [(e.event_type, e.data) for e in events[:-1]] == [
        ("chunk", "Hel"), ("chunk", "lo there"), ("chunk", ", friend!")]
    done = events[-1]
    assert done.event_type == "done"
    assert done.data["text"] == "Hello there, friend!" and done.data["stop_reason"] == "end_turn"
    assert set(done.data["usage"]) == {"input_tokens", "output_tokens"}
    assert claude.last.stream is True


def test_stream_with_tools_accumulates_parallel_calls_split_mid_string(api, claude):
    claude.enqueue(replies.tool_use([("write_file", ARGS), ("read_file", {"filename": "soul.md"})],
                                    text="Saving.", fragment_sizes=(1, 5, 2, 7)))

    events = list(api.stream(tool_config()))

    done = events[-1]
    assert done.event_type == "done" and done.data["stop_reason"] == "tool_use"
    ids = [call.id for call in done.data["tool_calls"]]
    assert done.data["tool_calls"] == [ToolCall(ids[0], "write_file", ARGS),
                                       ToolCall(ids[1], "read_file", {"filename": "soul.md"})]
    assert done.data["invalid_tool_calls"] == []
    assert "".join(e.data for e in events if e.event_type == "chunk") == "Saving."
    segments = [e.data for e in events if e.event_type == "segment"]
    streamed = "".join(s.payload["delta"] for s in segments
                       if s.event_type == "content" and s.segment_id == ids[0])
    assert json.loads(streamed) == ARGS
    second = [s.event_type for s in segments if s.segment_id == ids[1]]
    assert second[0] == "start" and second[-1] == "end"
    assert segments[-1].event_type == "end" and segments[-1].payload["arguments"] == {"filename": "soul.md"}


def test_stream_with_invalid_tool_json_reports_it_without_crashing(api, claude):
    claude.enqueue(replies.tool_use([("write_file", '{"filename": memory.md}')]))

    done = list(api.stream(tool_config()))[-1]

    assert done.event_type == "done" and done.data["tool_calls"] == []
    invalid = done.data["invalid_tool_calls"][0]
    assert invalid.is_error and invalid.name == "write_file"


def test_stream_truncated_tool_call_is_not_offered_to_run(api, claude):
    claude.enqueue(replies.truncated_tool_use("write_file", '{"filename": "memory.md"}'))

    done = list(api.stream(tool_config()))[-1]

    assert done.data["stop_reason"] == "max_tokens"
    assert done.data["tool_calls"] == []
    assert done.data["invalid_tool_calls"][0].content == "The tool call was cut off."
