"""The Claude fake's request validation: what the Messages API refuses, the fake refuses too."""
import pytest

from tests.fakes import validation

MODEL = "claude-sonnet-5-5"
HI = [{"role": "user", "content": "Hi"}]
TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]


USE = {"role": "assistant", "content": [
    {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}}]}
PARALLEL = {"role": "assistant", "content": [
    {"type": "text", "text": "Two at once."},
    {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}},
    {"type": "tool_use", "id": "toolu_b", "name": "f", "input": {"x": 1}}]}


def _result(tool_id="toolu_a"):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


@pytest.mark.parametrize("body, expected", [
    ({"max_tokens": 5, "messages": HI}, "model: Field required"),
    ({"model": MODEL, "messages": HI}, "max_tokens: Field required"),
    ({"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ({"model": MODEL, "max_tokens": 5, "messages": []}, "at least one message"),
    ({"model": MODEL, "max_tokens": 5, "messages": [USE]}, 'first message must use the "user"'),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [USE]}, "without `tool_result`"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [USE, {"role": "user", "content": [
        _result("toolu_b")]}]}, "unexpected `tool_use_id`"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [USE, {"role": "user", "content": [
        {"type": "text", "text": "x"}, _result()]}]}, "must come first"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [USE, {"role": "user", "content": [
        _result()]}, USE, {"role": "user", "content": [_result()]}]}, "ids must be unique"),
    ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": [_result()]}]},
     "unexpected `tool_use_id`"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [PARALLEL, {"role": "user", "content": [
        _result("toolu_a")]}]}, "immediately after: toolu_b"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI + [
        USE, {"role": "assistant", "content": "x"}]},
     "immediately after: toolu_a"),
    ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": USE["content"]}]},
     "only be in `assistant` messages"),
    ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": ""}]},
     "non-empty content"),
    ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 5}]},
     "maximum of 4 blocks with cache_control"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI, "tools": TOOLS,
      "tool_choice": {"type": "sometimes"}}, "does not match any of the expected tags"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI, "tools": TOOLS,
      "tool_choice": {"type": "tool"}}, "tool_choice.tool.name: Field required"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI, "tool_choice": {"type": "any"}},
     "only be specified while providing tools"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI, "tools": [{"name": "f"}]},
     "input_schema: Field required"),
    ({"model": MODEL, "max_tokens": 5, "messages": HI, "tools": [{"input_schema": {
        "type": "object"}}]}, "name: Field required"),
])
def test_validation_rejects_what_the_api_rejects(body, expected):
    assert expected in (validation.problem(body) or "")


@pytest.mark.parametrize("body", [
    {"model": MODEL, "max_tokens": 5, "messages": HI + [PARALLEL, {"role": "user", "content": [
        _result("toolu_a"), _result("toolu_b")]}]},
    {"model": MODEL, "max_tokens": 5, "messages": HI + [USE, {"role": "user", "content": [
        _result(), {"type": "text", "text": "more"}]}, {"role": "assistant", "content": "Done"}]},
    {"model": MODEL, "max_tokens": 5, "messages": HI, "tools": TOOLS,
     "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}},
    {"model": MODEL, "max_tokens": 5, "messages": HI, "tool_choice": {"type": "none"}},
])
def test_validation_accepts_correct_requests(body):
    assert validation.problem(body) is None
