"""The one engine, run on every provider: Anthropic and OpenAI-compatible through `ApiClient`
(the real SDKs against FakeClaude / FakeOpenAI), and the toy JSON-lines adapter
(toy_adapter.py, FakeJsonl) straight through `engine`. Each behaviour the two hand-written
engines used to decide differently is decided once and pinned here for all three."""
import threading

import pytest

from src.utils.api_request import ApiClient, CancelSignal, Connection, RequestConfig, engine
from src.utils.api_request.tool_loop import MAX_TOKENS_CAP
from tests.api_request.conftest import KEY, MODEL, Files, tool_config, user
from tests.api_request.toy_adapter import ToyAdapter
from tests.chat.chat_support import OPENAI_MODEL, PROVIDERS
from tests.fakes.claude import FakeClaude, replies
from tests.fakes.jsonl import FakeJsonl
from tests.fakes.openai_compat import FakeOpenAI

ENGINES = (*PROVIDERS, "toy")
BUDGET = {"anthropic": "max_tokens", "openai_compatible": "max_tokens", "toy": "limit"}


class ToyClient:
    """`request`, `stream` and `tool_request` of the engine over the toy adapter."""

    def __init__(self, url: str):
        self.adapter = ToyAdapter(url)

    def request(self, config):
        return engine.request(self.adapter, config, "toy-1")

    def stream(self, config, cancel=None):
        return engine.stream(self.adapter, config, "toy-1", cancel)

    def tool_request(self, config, executor):
        return engine.tool_request(self.adapter, config, "toy-1", executor)

    def close(self):
        self.adapter.close()


@pytest.fixture(params=ENGINES)
def provider(request):
    """(name, fake, client) for each provider; both are closed after the test."""
    name = request.param
    fake: FakeClaude
    client: ApiClient | ToyClient
    if name == "anthropic":
        fake = FakeClaude()
        client = ApiClient(api_key=KEY, base_url=fake.url, timeout=5.0, max_retries=0,
                           default_model=MODEL)
    elif name == "openai_compatible":
        fake = FakeOpenAI()
        connection = Connection("openai_compatible", fake.url, None, 100_000)
        client = ApiClient(connection_source=lambda: connection, timeout=5.0, max_retries=0,
                           default_model=OPENAI_MODEL)
    else:
        fake = FakeJsonl()
        client = ToyClient(fake.url)
    yield name, fake, client
    client.close()
    fake.close()
    if fake.errors:
        raise fake.errors[0]


def test_the_tool_loop_answers_every_call_in_order_and_sums_usage(provider):
    _, fake, client = provider
    fake.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"}),
                                   ("read_file", {"filename": "soul.md"})]),
                 replies.tool_use([("write_file", {"filename": "memory.md", "content": "- tea"})]),
                 replies.text("Done."))
    files = Files(**{"soul.md": "# Soul"})

    result = client.tool_request(tool_config(), files)

    assert (result.success, result.content, result.stop_reason) == (True, "Done.", "end_turn")
    assert [call[0] for call in files.calls] == ["read_file", "read_file", "write_file"]
    assert [(r["round"], r["result"]) for r in result.tool_results] == [
        (1, "# Memory"), (1, "# Soul"), (2, "File written.")]
    assert len(fake.requests) == 3 and all(r.rejected is None for r in fake.requests)
    assert result.usage["output_tokens"] >= 3 and result.usage["input_tokens"] >= 3


def test_a_plain_executor_is_asked_about_tools_it_was_not_offered(provider):
    _, fake, client = provider
    fake.enqueue(replies.tool_use([("delete_file", {"filename": "memory.md"})]),
                 replies.text("Understood."))
    files = Files()

    result = client.tool_request(tool_config(), files)

    assert result.success and files.calls == [("delete_file", {"filename": "memory.md"})]
    assert result.tool_results[0]["result"] == "Unknown tool: delete_file"


def test_a_turn_cut_by_max_tokens_is_asked_again_once_then_refused(provider):
    name, fake, client = provider
    fake.default = replies.tool_use([("read_file", {"filename": "memory.md"}),
                                     ("write_file", '{"filename": "memory.md", "cont')],
                                    stop_reason="max_tokens")
    files = Files()

    result = client.tool_request(tool_config(max_tokens=1000), files)

    assert (result.success, result.error) == (False, "truncated_tool_call")
    assert files.calls == []  # not even the complete first call of the cut turn
    assert [r.body[BUDGET[name]] for r in fake.requests] == [1000, 2000]
    capped = client.tool_request(tool_config(max_tokens=MAX_TOKENS_CAP), files)
    assert capped.error == "truncated_tool_call" and len(fake.requests) == 3


def test_a_stream_yields_chunks_then_one_done_with_usage(provider):
    _, fake, client = provider
    fake.enqueue(replies.text("One two three four.", usage={"output_tokens": 4}))

    events = list(client.stream(RequestConfig(system_prompt="s", messages=user())))

    assert "".join(e.data for e in events if e.event_type == "chunk") == "One two three four."
    assert [e.event_type for e in events][-1] == "done"
    assert events[-1].data["stop_reason"] == "end_turn"
    assert events[-1].data["usage"]["output_tokens"] == 4


def test_a_streamed_turn_cut_by_max_tokens_offers_none_of_its_calls(provider):
    _, fake, client = provider
    fake.enqueue(replies.tool_use([("read_file", {"filename": "memory.md"}),
                                   ("write_file", '{"filename": "memory.md", "cont')],
                                  stop_reason="max_tokens"))

    done = list(client.stream(tool_config()))[-1]

    assert done.event_type == "done" and done.data["stop_reason"] == "max_tokens"
    assert done.data["tool_calls"] == []
    assert sorted(call.name for call in done.data["invalid_tool_calls"]) == ["read_file",
                                                                            "write_file"]


def test_a_runaway_stream_is_cut_off_with_an_error(provider):
    _, fake, client = provider
    fake.enqueue(replies.text("x " * 1200, chunks=["x "] * 1200))

    events = list(client.stream(RequestConfig(system_prompt="s", messages=user(),
                                              max_tokens=16)))

    assert events[-1].event_type == "error" and events[-1].data["code"] == "api_error"
    assert len([e for e in events if e.event_type == "chunk"]) < 1200


@pytest.mark.parametrize("ending, code", [
    (replies.drop(after_events=4), "connection_error"),
    (replies.unfinished(), "connection_error"),
    (replies.stream_error("overloaded_error", "busy", after_events=4), "overloaded"),
])
def test_a_stream_that_does_not_finish_ends_with_one_error(provider, ending, code):
    _, fake, client = provider
    fake.enqueue(ending)

    events = list(client.stream(RequestConfig(system_prompt="s", messages=user())))

    assert [e.event_type for e in events].count("error") == 1
    assert events[-1].event_type == "error" and events[-1].data["code"] == code


def test_a_cancel_ends_the_stream_with_the_partial_text_and_hangs_up(provider):
    _, fake, client = provider
    gate, cancel = threading.Event(), CancelSignal()
    fake.enqueue(replies.gated(replies.text("Part one. Part two."), gate))
    seen = []
    try:
        for event in client.stream(RequestConfig(system_prompt="s", messages=user()), cancel):
            seen.append(event)
            if event.event_type == "chunk":
                cancel.set()
        fake.wait_for_disconnect(index=0)
    finally:
        gate.set()
    assert seen[-1].event_type == "done" and seen[-1].data["stop_reason"] == "cancelled"
    assert seen[-1].data["text"] == "".join(e.data for e in seen if e.event_type == "chunk")
