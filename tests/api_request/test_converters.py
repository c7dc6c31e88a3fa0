"""The Anthropic and OpenAI converters (pure functions on plain data)."""
from types import SimpleNamespace

import pytest

from src.utils.api_request import (
    SystemBlock,
    ToolCall,
    ToolCallAccumulator,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    anthropic as convert,
    openai,
)
from src.utils.api_request.adapter import Usage
from tests.api_request.conftest import READ_FILE

WEATHER = ToolDefinition("get_weather", "The weather in a city.",
                         {"type": "object", "properties": {"location": {"type": "string"}}})


def test_tool_definition_to_anthropic_tool():
    assert convert.tool_param(WEATHER) == {
        "name": "get_weather", "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}
    raw = {"name": "x", "description": "y", "input_schema": {"type": "object"}}
    assert convert.tool_params([raw, READ_FILE])[0] is raw


@pytest.mark.parametrize("choice, parallel_off, expected", [
    (ToolChoice.auto(), False, {"type": "auto"}),
    (ToolChoice.any(), True, {"type": "any", "disable_parallel_tool_use": True}),
    (ToolChoice.required(), False, {"type": "any"}),
    (ToolChoice.none(), True, {"type": "none"}),
    (ToolChoice.tool("get_weather"), False, {"type": "tool", "name": "get_weather"}),
    ("auto", True, {"type": "auto", "disable_parallel_tool_use": True}),
    (None, False, None),
])
def test_tool_choice_to_anthropic(choice, parallel_off, expected):
    assert convert.tool_choice_param(choice, parallel_off) == expected


def test_tool_choice_rejects_nonsense():
    with pytest.raises(ValueError):
        ToolChoice("sometimes")
    with pytest.raises(ValueError):
        ToolChoice("tool")


def test_system_prompt_cache_breakpoints():
    assert convert.system_param("Be kind.") == "Be kind."
    assert convert.system_param("") is None
    assert convert.system_param("Be kind.", cache_system=True) == [
        {"type": "text", "text": "Be kind.", "cache_control": {"type": "ephemeral"}}]
    blocks = [SystemBlock("Persona", cache=True), SystemBlock(""), SystemBlock("Cortex")]
    assert convert.system_param(blocks, cache_system=True) == [
        {"type": "text", "text": "Persona", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Cortex", "cache_control": {"type": "ephemeral"}}]
    assert convert.system_param(blocks)[1] == {"type": "text", "text": "Cortex"}


def test_parse_tool_use_blocks_from_objects_and_dicts():
    block = SimpleNamespace(type="tool_use", id="toolu_1", name="get_weather",
                            input={"location": "Paris"})
    content = [SimpleNamespace(type="text", text="Checking."), block,
               {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": "oops"}]

    assert convert.tool_calls(content) == [ToolCall("toolu_1", "get_weather", {"location": "Paris"}),
                                           ToolCall("toolu_2", "get_weather", {})]
    assert convert.text_of(content) == "Checking."


def test_tool_results_to_anthropic_blocks():
    message = convert.tool_results_message([ToolResult.success("a", "x", "ok"),
                                            ToolResult.error("b", "y", "broken")])
    assert message == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "ok"},
        {"type": "tool_result", "tool_use_id": "b", "content": "broken", "is_error": True}]}


def test_assistant_turn_keeps_tool_use_and_thinking_and_drops_empty_text():
    content = [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
               {"type": "text", "text": ""},
               SimpleNamespace(type="tool_use", id="t", name="n", input={"a": 1})]
    assert convert.assistant_message(content) == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}]}


def test_anthropic_stream_events_to_tool_call_deltas():
    start = {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}}
    delta = {"type": "content_block_delta", "index": 1,
             "delta": {"type": "input_json_delta", "partial_json": '{"loc'}}
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}

    assert convert.chunk_from_event(start).tool_calls == [ToolCallDelta(1, "toolu_9", "get_weather")]
    assert convert.chunk_from_event(delta).tool_calls == [ToolCallDelta(1, arguments_delta='{"loc')]
    assert convert.chunk_from_event(text).content == "Hi"
    assert convert.chunk_from_event({"type": "content_block_stop", "index": 1}) is None


def test_usage_keeps_cache_counters_only_when_reported():
    assert convert.usage_dict({"input_tokens": 5, "output_tokens": 2,
                               "cache_read_input_tokens": 0}) == {"input_tokens": 5, "output_tokens": 2}
    usage = Usage({"input_tokens": 1, "output_tokens": 2})
    usage.add({"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 7})
    assert usage.totals == {"input_tokens": 4, "output_tokens": 6, "cache_read_input_tokens": 7}


OPENAI_DELTAS = [
    [{"index": 0, "id": "call_a", "type": "function",
      "function": {"name": "get_weather", "arguments": ""}}],
    [{"index": 0, "function": {"arguments": '{"loca'}},
     {"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{"}}],
    [{"index": 1, "function": {"arguments": '"tz": "CET"}'}}],
    [{"index": 0, "function": {"arguments": 'tion": "Par'}}],
    [{"index": 0, "function": {"arguments": 'is"}'}}],
]


def as_objects(call):
    function = call.get("function")
    return SimpleNamespace(index=call["index"], id=call.get("id"), type=call.get("type"),
                           function=SimpleNamespace(name=function.get("name"),
                                                    arguments=function.get("arguments")))


@pytest.mark.parametrize("shape", [dict, as_objects])
def test_openai_delta_tool_calls_become_tool_calls(shape):
    accumulator = ToolCallAccumulator()
    for chunk in OPENAI_DELTAS:
        for delta in openai.tool_call_deltas([shape(call) for call in chunk]):
            accumulator.add(delta)

    assert accumulator.finish() == [ToolCall("call_a", "get_weather", {"location": "Paris"}),
                                    ToolCall("call_b", "get_time", {"tz": "CET"})]


def test_openai_delta_fields_are_normalised():
    first = openai.tool_call_deltas([OPENAI_DELTAS[0][0]])[0]
    assert first == ToolCallDelta(0, call_id="call_a", name="get_weather", arguments_delta=None)
    assert openai.tool_call_deltas(None) is None and openai.tool_call_deltas([]) is None
    no_function = SimpleNamespace(index=2, id=None, function=None)
    assert openai.tool_call_deltas([no_function]) == [ToolCallDelta(2)]


def test_openai_history_keeps_tool_calls_and_answers_them_by_id():
    calls = [ToolCall("call_a", "get_weather", {"location": "Paris"})]
    assert openai.assistant_message("", calls) == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}]}
    assert openai.tool_result_messages([ToolResult.success("call_a", "get_weather", "Sunny"),
                                        ToolResult.error("call_b", "get_time", "No clock")]) == [
        {"role": "tool", "tool_call_id": "call_a", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": "Error: No clock"}]
    message = {"tool_calls": [{"id": "call_c", "function": {"name": "f", "arguments": "{bad"}}]}
    assert openai.parse_tool_calls(message) == [ToolCall("call_c", "f", {})]


def test_openai_tools_and_tool_choice():
    assert openai.tool_param(WEATHER) == {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": WEATHER.input_schema}}
    assert [openai.tool_choice_param(c) for c in ("auto", "any", "none", None)] == [
        "auto", "required", "none", None]
    assert openai.tool_choice_param(ToolChoice.tool("f")) == {"type": "function", "function": {"name": "f"}}
