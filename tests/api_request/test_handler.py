"""ToolHandler: registry, parallel turns under a bound, per-call timeouts, order, errors."""
import threading

import pytest

from src.utils.api_request import ToolCall, ToolDefinition, ToolHandler, ToolResult

SCHEMA = {"type": "object"}


def tool(name):
    return ToolDefinition(name, f"The {name} tool.", SCHEMA)


def calls(*names):
    return [ToolCall(f"id_{i}", name, {"n": i}) for i, name in enumerate(names)]


def test_registry_offers_definitions_in_registration_order():
    handler = ToolHandler()
    handler.register(tool("b"), lambda call: "b")
    handler.register(tool("a"), lambda call: "a")

    assert [d.name for d in handler.definitions] == ["b", "a"]
    assert handler.has_tool("a") and not handler.has_tool("c")


def test_results_come_back_in_call_order_even_when_later_calls_finish_first():
    second_done = threading.Event()
    handler = ToolHandler(max_parallel=2, timeout=5.0)
    handler.register(tool("slow"), lambda call: "slow" if second_done.wait(5) else "never")
    handler.register(tool("fast"), lambda call: (second_done.set(), "fast")[1])

    results = handler.execute_batch(calls("slow", "fast"))

    assert results == [ToolResult.success("id_0", "slow", "slow"),
                       ToolResult.success("id_1", "fast", "fast")]


def test_parallel_execution_respects_the_bound():
    lock, state = threading.Lock(), {"active": 0, "peak": 0}
    pair_running = threading.Event()

    def work(call):
        with lock:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
            if state["active"] == 2:
                pair_running.set()
        pair_running.wait(5)
        with lock:
            state["active"] -= 1
        return "ok"

    handler = ToolHandler(max_parallel=2, timeout=5.0)
    handler.register(tool("work"), work)

    results = handler.execute_batch(calls(*["work"] * 6))

    assert [r.content for r in results] == ["ok"] * 6
    assert state["peak"] == 2


def test_a_call_over_its_timeout_gets_an_error_and_the_turn_goes_on():
    release = threading.Event()
    handler = ToolHandler(max_parallel=1, timeout=0.5)
    handler.register(tool("hang"), lambda call: release.wait(10) and "late")
    handler.register(tool("quick"), lambda call: "quick")
    try:
        results = handler.execute_batch(calls("hang", "quick"))
    finally:
        release.set()

    assert results[0].is_error and "timed out after 0.5 s" in results[0].content
    assert results[1] == ToolResult.success("id_1", "quick", "quick")


def test_unknown_tools_and_exceptions_become_error_results():
    handler = ToolHandler()
    handler.register(tool("boom"), lambda call: 1 / 0)

    unknown, boom = handler.execute_batch(calls("missing", "boom"))

    assert unknown == ToolResult.error("id_0", "missing", "Unknown tool: missing")
    assert boom.is_error and "division by zero" in boom.content


@pytest.mark.parametrize("returned, expected", [
    ("plain text", ToolResult.success("id_0", "t", "plain text")),
    ((False, "nope"), ToolResult.error("id_0", "t", "nope")),
    (ToolResult.success("wrong_id", "other", "fine"), ToolResult.success("id_0", "t", "fine")),
    (42, ToolResult.error("id_0", "t", "Tool t returned an unusable result.")),
])
def test_executor_return_values_are_normalised_to_the_call(returned, expected):
    handler = ToolHandler()
    handler.register(tool("t"), lambda call: returned)

    assert handler.execute(calls("t")[0]) == expected


def test_without_continue_on_error_the_rest_of_the_turn_is_skipped():
    ran = []
    handler = ToolHandler(max_parallel=1, continue_on_error=False)
    handler.register(tool("fail"), lambda call: (False, "failed"))
    handler.register(tool("ok"), lambda call: ran.append(call.id) or "ok")

    results = handler.execute_batch(calls("fail", "ok"))

    assert [r.is_error for r in results] == [True, True]
    assert "Not run" in results[1].content and ran == []


def test_max_parallel_must_be_positive():
    with pytest.raises(ValueError):
        ToolHandler(max_parallel=0)
