"""The tool loop beyond seed 000: truncation, tool_choice, handlers, refusals, models."""
import pytest

from src.utils.api_request import ApiClient, ToolChoice, ToolHandler
from tests.api_request.conftest import (
    KEY,
    MODEL,
    READ_FILE,
    WRITE_FILE,
    Files,
    tool_config as config,
    user,
)
from tests.fakes.claude import replies


def test_truncated_tool_call_is_never_run_and_asked_again_with_more_tokens(api, claude):
    claude.enqueue(
        replies.truncated_tool_use("write_file", '{"filename": "memory.md", "cont'),
        replies.tool_use([("write_file", {"filename": "memory.md", "content": "# Memory\n- all"})]),
        replies.text("Saved."))
    files = Files()

    result = api.tool_request(config(max_tokens=1000), files)

    assert result.success and result.content == "Saved."
    assert files.calls == [("write_file", {"filename": "memory.md", "content": "# Memory\n- all"})]
    assert [r.body["max_tokens"] for r in claude.requests] == [1000, 2000, 2000]
    assert claude.requests[1].messages == user()
    assert len(claude.requests[2].messages) == 3


def test_truncated_twice_fails_without_running_anything(api, claude):
    claude.default = replies.truncated_tool_use("write_file", '{"filename": "memory.md", "cont')
    files = Files()

    result = api.tool_request(config(max_tokens=1000), files)

    assert not result.success and result.error == "truncated_tool_call"
    assert files.calls == [] and len(claude.requests) == 2
    assert result.error_message


def test_truncated_at_the_token_cap_is_not_retried(api, claude):
    claude.default = replies.truncated_tool_use("write_file", '{"filename": "memory.md"')

    result = api.tool_request(config(max_tokens=16384), Files())

    assert result.error == "truncated_tool_call" and len(claude.requests) == 1


def test_max_tokens_without_a_tool_call_is_a_normal_end(api, claude):
    claude.enqueue(replies.text("A long answer that got cut", stop_reason="max_tokens"))

    result = api.tool_request(config(), Files())

    assert result.success and result.stop_reason == "max_tokens"
    assert result.content == "A long answer that got cut"


@pytest.mark.parametrize("choice, disable_parallel, wire", [
    ("auto", False, {"type": "auto"}),
    ("any", False, {"type": "any"}),
    ("required", True, {"type": "any", "disable_parallel_tool_use": True}),
    ("none", False, {"type": "none"}),
    (None, True, {"type": "auto", "disable_parallel_tool_use": True}),
    (None, False, None),
])
def test_tool_choice_on_the_wire(api, claude, choice, disable_parallel, wire):
    claude.enqueue(replies.text("Ok."))
    tool_choice = ToolChoice.parse(choice) if choice else None

    api.tool_request(config(tool_choice=tool_choice, disable_parallel_tool_use=disable_parallel),
                     Files())

    assert claude.last.body.get("tool_choice") == wire
    assert claude.last.rejected is None


def test_named_tool_choice_on_the_wire(api, claude):
    claude.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"})]), replies.text("Ok."))

    api.tool_request(config(tool_choice=ToolChoice.tool("read_file")), Files())

    assert claude.requests[0].body["tool_choice"] == {"type": "tool", "name": "read_file"}


def test_a_tool_handler_runs_the_turn_and_offers_its_tools(api, claude):
    handler = ToolHandler(max_parallel=2, timeout=5.0)
    handler.register(READ_FILE, lambda call: f"content of {call.arguments['filename']}")
    handler.register(WRITE_FILE, lambda call: (True, "written"))
    first = replies.tool_use([("read_file", {"filename": "soul.md"}),
                              ("write_file", {"filename": "memory.md", "content": "x"})])
    claude.enqueue(first, replies.text("Done."))

    result = api.tool_request(config(tools=None), handler)

    assert result.success
    assert [tool["name"] for tool in claude.requests[0].tools] == ["read_file", "write_file"]
    assert claude.requests[1].messages[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": first.ids[0], "content": "content of soul.md"},
        {"type": "tool_result", "tool_use_id": first.ids[1], "content": "written"}]


def test_a_strict_handler_stops_the_loop_on_a_failed_tool(api, claude):
    handler = ToolHandler(continue_on_error=False)
    handler.register(READ_FILE, lambda call: (False, "unreadable"))
    claude.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"})]), replies.text("x"))

    result = api.tool_request(config(tools=None), handler)

    assert not result.success and result.error == "tool_execution_failed"
    assert result.tool_results[0]["result"] == "unreadable" and len(claude.requests) == 1


def test_not_configured_without_a_key(claude):
    client = ApiClient(base_url=claude.url, max_retries=0)

    result = client.tool_request(config(), Files())

    assert not client.is_ready
    assert (result.success, result.error) == (False, "not_configured")
    assert result.error_message == "No API key configured: add one in Settings."
    assert claude.requests == []


def test_the_callers_history_is_not_modified(api, claude):
    claude.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"})]), replies.text("Ok."))
    history = user()

    api.tool_request(config(messages=history), Files())

    assert history == user()


def test_model_defaults_and_can_be_overridden(claude):
    claude.default = replies.text("Ok.")
    with ApiClient(api_key=KEY, base_url=claude.url, max_retries=0, default_model=MODEL) as client:
        client.tool_request(config(), Files())
        client.tool_request(config(model="claude-opus-5-1"), Files())

    assert [r.body["model"] for r in claude.requests] == [MODEL, "claude-opus-5-1"]


@pytest.mark.parametrize("overrides, detail", [
    ({"prefill": "{"}, "prefill"),
    ({"max_tool_rounds": 0}, "max_tool_rounds"),
])
def test_settings_the_loop_cannot_honour_are_refused_before_any_request(api, claude, overrides, detail):
    result = api.tool_request(config(**overrides), Files())

    assert result.error == "invalid_request" and detail in result.error_message
    assert claude.requests == []
