"""`ApiClient.tool_request()`: the tool_use loop of seed 000, against the fake with the real SDK."""
from src.utils.api_request import MAX_TOOL_ROUNDS, ToolHandler
from src.utils.api_request.anthropic import text_of
from tests.api_request.conftest import READ_FILE, Files, tool_config as config
from tests.fakes.claude import replies


def test_single_round_read_then_end_turn(api, claude):
    first = replies.tool_use([("read_file", {"filename": "memory.md"})], text="Let me look.")
    claude.enqueue(first, replies.text("Nothing to change."))
    files = Files()

    result = api.tool_request(config(), files)

    assert result.success and result.content == "Nothing to change."
    assert result.stop_reason == "end_turn"
    assert files.calls == [("read_file", {"filename": "memory.md"})]
    assert result.tool_results == [{"round": 1, "tool_name": "read_file",
                                    "tool_input": {"filename": "memory.md"},
                                    "tool_use_id": first.ids[0], "success": True,
                                    "result": "# Memory"}]
    second = claude.requests[1]
    assert second.messages[1:] == [
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": first.ids[0], "name": "read_file",
             "input": {"filename": "memory.md"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": first.ids[0], "content": "# Memory"}]},
    ]
    assert [tool["name"] for tool in second.tools] == ["read_file", "write_file"]


def test_multi_round_read_write_end_turn(api, claude):
    claude.enqueue(
        replies.tool_use([("read_file", {"filename": "memory.md"})]),
        replies.tool_use([("write_file", {"filename": "memory.md", "content": "# Memory\n- tea"})]),
        replies.text("Memory updated."))
    files = Files()

    result = api.tool_request(config(), files)

    assert result.success and result.content == "Memory updated."
    assert files.files["memory.md"] == "# Memory\n- tea"
    assert [(r["round"], r["tool_name"]) for r in result.tool_results] == [(1, "read_file"),
                                                                             (2, "write_file")]
    assert len(claude.requests) == 3


def test_three_rounds_of_parallel_calls_send_the_full_history(api, claude):
    round1 = replies.tool_use([("read_file", {"filename": "memory.md"}),
                               ("read_file", {"filename": "soul.md"})], text="Reading both.")
    round2 = replies.tool_use([
        ("write_file", {"filename": "memory.md", "content": "# Memory\n- likes tea"}),
        ("write_file", {"filename": "relationship.md", "content": "# Us\n- warm"})])
    claude.enqueue(round1, round2, replies.text("All updated."))
    files = Files(**{"soul.md": "# Soul"})

    result = api.tool_request(config(), files)

    assert result.success and result.content == "All updated."
    a, b = round1.ids
    c, d = round2.ids
    assert claude.requests[2].messages == [
        {"role": "user", "content": "Please update your memory."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": a, "name": "read_file", "input": {"filename": "memory.md"}},
            {"type": "tool_use", "id": b, "name": "read_file", "input": {"filename": "soul.md"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": a, "content": "# Memory"},
            {"type": "tool_result", "tool_use_id": b, "content": "# Soul"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": c, "name": "write_file",
             "input": {"filename": "memory.md", "content": "# Memory\n- likes tea"}},
            {"type": "tool_use", "id": d, "name": "write_file",
             "input": {"filename": "relationship.md", "content": "# Us\n- warm"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c, "content": "File written."},
            {"type": "tool_result", "tool_use_id": d, "content": "File written."}]},
    ]
    assert [r["tool_use_id"] for r in result.tool_results] == [a, b, c, d]
    assert all(request.rejected is None for request in claude.requests)


def test_no_tools_is_an_error_without_a_request(api, claude):
    result = api.tool_request(config(tools=None), Files())

    assert not result.success and result.error == "invalid_request"
    assert "tools" in result.error_message
    assert claude.requests == []


def test_executor_exception_becomes_is_error_and_the_loop_goes_on(api, claude):
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md", "content": "x"})]),
                   replies.text("Sorry, the write failed."))

    def broken(name, arguments):
        raise OSError("disk full")

    result = api.tool_request(config(), broken)

    assert result.success and result.content == "Sorry, the write failed."
    answer = claude.requests[1].messages[-1]["content"][0]
    assert answer["is_error"] is True and "disk full" in answer["content"]
    assert result.tool_results[0]["success"] is False


def test_executor_failure_result_is_sent_with_is_error(api, claude):
    claude.enqueue(replies.tool_use([("read_file", {"filename": "soul.md"})]), replies.text("Ok."))

    result = api.tool_request(config(), lambda name, args: (False, "No such file: soul.md"))

    answer = claude.requests[1].messages[-1]["content"][0]
    assert answer == {"type": "tool_result", "tool_use_id": answer["tool_use_id"],
                      "content": "No such file: soul.md", "is_error": True}
    assert result.success and result.tool_results[0]["success"] is False


def test_a_plain_executor_decides_about_tools_it_was_not_offered(api, claude):
    claude.enqueue(replies.tool_use([("delete_everything", {})]), replies.text("Understood."))
    files = Files()

    result = api.tool_request(config(), files)

    assert files.calls == [("delete_everything", {})]
    answer = claude.requests[1].messages[-1]["content"][0]
    assert answer["is_error"] is True and "Unknown tool: delete_everything" in answer["content"]
    assert result.success


def test_a_tool_handler_answers_unregistered_tools_without_running_anything(api, claude):
    ran = []
    handler = ToolHandler()
    handler.register(READ_FILE, lambda call: ran.append(call) or "x")
    claude.enqueue(replies.tool_use([("delete_everything", {})]), replies.text("Understood."))

    result = api.tool_request(config(tools=None), handler)

    assert ran == [] and result.success
    answer = claude.requests[1].messages[-1]["content"][0]
    assert answer["is_error"] is True and "Unknown tool: delete_everything" in answer["content"]


def test_max_tool_rounds_stops_the_loop(api, claude):
    claude.default = replies.tool_use([("read_file", {"filename": "memory.md"})], text="Again.")
    files = Files()

    result = api.tool_request(config(), files)

    assert result.success and result.stop_reason == "max_tool_rounds"
    assert result.content == "Again."
    assert len(claude.requests) == MAX_TOOL_ROUNDS == 10
    assert len(files.calls) == MAX_TOOL_ROUNDS


def test_max_tool_rounds_can_be_lowered(api, claude):
    claude.default = replies.tool_use([("read_file", {"filename": "memory.md"})])

    result = api.tool_request(config(max_tool_rounds=2), Files())

    assert result.stop_reason == "max_tool_rounds" and len(claude.requests) == 2


def test_api_error_returns_a_failed_response(api, claude):
    claude.enqueue(replies.server_error())

    result = api.tool_request(config(), Files())

    assert not result.success and result.error == "api_error" and result.retryable


def test_api_error_in_a_later_round_keeps_the_log_so_far(api, claude):
    claude.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"})]),
                   replies.overloaded())

    result = api.tool_request(config(), Files())

    assert not result.success and result.error == "overloaded"
    assert [r["tool_name"] for r in result.tool_results] == ["read_file"]


def test_credit_balance_exhausted_is_recognised(api, claude):
    claude.enqueue(replies.credit_exhausted())

    result = api.tool_request(config(), Files())

    assert not result.success and result.error == "credit_balance_exhausted"
    assert not result.retryable and "credit" in result.error_message.lower()


def test_usage_is_accumulated_over_all_rounds(api, claude):
    claude.enqueue(
        replies.tool_use([("read_file", {"filename": "memory.md"})],
                         usage={"input_tokens": 1200, "output_tokens": 40}),
        replies.tool_use([("write_file", {"filename": "memory.md", "content": "x"})],
                         usage={"input_tokens": 1300, "output_tokens": 300}),
        replies.text("Done.", usage={"input_tokens": 1400, "output_tokens": 10}))

    result = api.tool_request(config(), Files())

    assert result.usage == {"input_tokens": 3900, "output_tokens": 350}


def test_only_text_blocks_make_the_content_and_end_turn_tool_use_is_not_run(api, claude):
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md", "content": "x"})],
                                    text="Final words.", stop_reason="end_turn"))
    files = Files()

    result = api.tool_request(config(), files)

    assert result.content == "Final words." and files.calls == []
    assert text_of([{"type": "text", "text": "A"}, {"type": "tool_use", "id": "t", "name": "x",
                                                     "input": {}}, {"type": "text", "text": "B"}]) == "A\nB"
    assert isinstance(result.raw_response, dict)


def test_a_key_removed_between_rounds_is_not_sent_again(api, claude):
    claude.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"})]),
                   replies.text("Never asked for."))

    def executor(name, arguments):
        api.set_api_key(None)  # as a DELETE of the key in any worker does before the next round
        return True, "# Memory"

    result = api.tool_request(config(), executor)

    assert not result.success and result.error == "not_configured"
    assert len(claude.requests) == 1
