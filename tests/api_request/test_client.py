"""`ApiClient.request()` / `stream()` on the wire, the key's life cycle, and check_key."""
import threading

import pytest

from src.utils.api_request import ApiClient, RequestConfig, SystemBlock
from tests.api_request.conftest import KEY, MODEL, user
from tests.fakes.claude import FakeClaude, replies


def test_request_sends_only_what_is_set(api, claude):
    claude.enqueue(replies.text("Hello!", usage={"input_tokens": 12, "output_tokens": 3}))

    result = api.request(RequestConfig(system_prompt="You are Mia.", messages=user("Hi"),
                                       max_tokens=300))

    assert (result.success, result.content, result.stop_reason) == (True, "Hello!", "end_turn")
    assert result.usage == {"input_tokens": 12, "output_tokens": 3}
    body = claude.last.body
    assert body["model"] == MODEL and body["max_tokens"] == 300
    assert body["system"] == "You are Mia." and body["messages"] == user("Hi")
    assert not {"temperature", "tools", "tool_choice", "output_config", "stream"} & set(body)


def test_effort_temperature_and_cache_breakpoints_on_the_wire(api, claude):
    claude.default = replies.text("Ok.")
    system = [SystemBlock("Persona card", cache=True), SystemBlock("Cortex files")]

    api.request(RequestConfig(system_prompt=system, messages=user(), effort="low",
                              temperature=0.4, cache_system=True))
    api.request(RequestConfig(system_prompt="Plain", messages=user(), cache_system=True))

    first, second = claude.requests
    assert first.body["output_config"] == {"effort": "low"}
    assert first.body["temperature"] == 0.4
    assert first.system == [
        {"type": "text", "text": "Persona card", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Cortex files", "cache_control": {"type": "ephemeral"}}]
    assert second.system == [{"type": "text", "text": "Plain", "cache_control": {"type": "ephemeral"}}]


def test_prompt_cache_usage_is_reported(api, claude):
    claude.default = replies.text("Ok.")
    config = RequestConfig(system_prompt="A long persona card. " * 40, messages=user(),
                           cache_system=True)

    first = api.request(config)
    second = api.request(config)

    assert first.usage["cache_creation_input_tokens"] > 0
    assert second.usage["cache_read_input_tokens"] == first.usage["cache_creation_input_tokens"]


def test_prefill_is_the_last_assistant_turn_without_trailing_space(api, claude):
    claude.enqueue(replies.text('"mood": "calm"}'))

    result = api.request(RequestConfig(system_prompt="s", messages=user(), prefill="{ "))

    assert claude.last.messages[-1] == {"role": "assistant", "content": "{"}
    assert result.content == '"mood": "calm"}'


def test_stream_uses_the_same_request_with_stream_set(api, claude):
    claude.enqueue(replies.text("Hi!"))

    events = list(api.stream(RequestConfig(system_prompt="s", messages=user(), effort="high")))

    assert [e.event_type for e in events] == ["chunk", "done"]
    assert claude.last.body["stream"] is True and claude.last.body["output_config"] == {"effort": "high"}


def test_the_base_url_comes_from_the_environment_when_not_given(claude, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
    claude.enqueue(replies.text("From the environment."))

    with ApiClient(api_key=KEY, max_retries=0, default_model=MODEL) as client:
        assert client.request(RequestConfig(system_prompt="s", messages=user())).success


def test_set_api_key_switches_keys_and_none_forgets_it():
    with FakeClaude(api_key=KEY) as fake, ApiClient(api_key=KEY, base_url=fake.url, max_retries=0,
                                                    default_model=MODEL) as client:
        fake.default = replies.text("Ok.")
        config = RequestConfig(system_prompt="s", messages=user())
        assert client.request(config).success
        client.set_api_key("sk-ant-another-key-111111111")
        assert client.request(config).error == "authentication_failed"
        client.set_api_key(KEY)
        assert client.request(config).success and client.is_ready
        client.set_api_key(None)
        assert not client.is_ready and client.request(config).error == "not_configured"


def test_set_api_key_is_safe_while_requests_run():
    outcomes, errors = [], []
    with FakeClaude(api_key=KEY) as fake, ApiClient(api_key=KEY, base_url=fake.url, max_retries=0,
                                                    default_model=MODEL) as client:
        fake.default = replies.text("Ok.")
        config = RequestConfig(system_prompt="s", messages=user())

        def ask():
            try:
                for _ in range(5):
                    outcomes.append(client.request(config).error)
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for i in range(10):
            client.set_api_key(KEY if i % 2 else "sk-ant-other-key-2222222222")
        for thread in threads:
            thread.join(10)

    assert errors == [] and len(outcomes) == 20
    assert set(outcomes) <= {None, "authentication_failed"}


def test_check_key_validates_with_one_tiny_request_and_leaves_the_client_alone():
    with FakeClaude(api_key=KEY) as fake, ApiClient(base_url=fake.url, default_model=MODEL) as client:
        fake.default = replies.text("H")
        good = client.check_key(KEY)
        bad = client.check_key("sk-ant-bad-key-33333333333")
        empty = client.check_key("  ")

        assert good.success and fake.requests[0].body["max_tokens"] == 1
        assert (bad.success, bad.error) == (False, "authentication_failed")
        assert empty.error == "not_configured" and len(fake.requests) == 2
        assert not client.is_ready


@pytest.mark.parametrize("name, chunks, text, stop_reason, usage", [
    ("basic_response.sse", ["Hello", " there", "!"], "Hello there!", "end_turn",
     {"input_tokens": 11, "output_tokens": 6}),
    ("refusal_response.sse", [], "", "refusal", {"input_tokens": 20, "output_tokens": 0}),
])
def test_recorded_streams_replay(api, claude, name, chunks, text, stop_reason, usage):
    claude.enqueue(replies.fixture(name), replies.fixture(name))
    config = RequestConfig(system_prompt="s", messages=user())

    events = list(api.stream(config))
    result = api.request(config)

    assert [e.data for e in events if e.event_type == "chunk"] == chunks
    assert events[-1].event_type == "done"
    assert events[-1].data == {"text": text, "usage": usage, "stop_reason": stop_reason}
    assert (result.content, result.stop_reason) == (text, stop_reason)


def test_recorded_tool_use_stream_replays_into_a_tool_call(api, claude):
    from src.utils.api_request import ToolCall, ToolDefinition

    weather = ToolDefinition("get_weather", "Weather.", {"type": "object"})
    claude.enqueue(replies.fixture("tool_use_response.sse"), replies.fixture("tool_use_response.sse"),
                   replies.text("Sunny in Paris."))
    config = RequestConfig(system_prompt="s", messages=user(), tools=[weather])

    done = list(api.stream(config))[-1]
    result = api.tool_request(config, lambda name, args: (True, f"{args['location']}: sunny"))

    call = ToolCall("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})
    assert done.data["tool_calls"] == [call] and done.data["stop_reason"] == "tool_use"
    assert done.data["text"] == "I'll check the current weather in Paris for you."
    assert result.content == "Sunny in Paris."
    assert claude.last.messages[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": call.id, "content": "Paris: sunny"}]


def test_a_streamed_request_reads_its_connection_once(claude):
    """Provider, URL and key come from one read of the settings per request (each read is a
    settings query and a secrets.json read), and the request goes where that read said."""
    from src.utils.api_request import Connection

    claude.default = replies.text("Once.")
    reads = []

    def connection() -> Connection:
        reads.append(1)
        return Connection("anthropic", claude.url, KEY)
    with ApiClient(connection_source=connection, timeout=5.0, max_retries=0,
                   default_model=MODEL) as api:
        events = list(api.stream(RequestConfig(system_prompt="s", messages=user())))
    assert events[-1].event_type == "done" and events[-1].data["text"] == "Once."
    assert len(reads) == 1


def test_a_request_that_names_its_connection_goes_there_without_reading_the_settings(claude):
    """A chat turn's request carries the connection its prompt read with the rest of the
    settings (`RequestConfig.connection`): the client reads none again, and the request goes
    where it says, with its key, and is fitted to its window. Its key is in no repr."""
    from src.utils.api_request import Connection

    claude.default = replies.text("There.")
    reads = []

    def connection() -> Connection:
        reads.append(1)
        return Connection("anthropic", "http://127.0.0.1:9", "sk-ant-api03-nowhere-0123456789")
    named = Connection("anthropic", claude.url, KEY)
    with ApiClient(connection_source=connection, timeout=5.0, max_retries=0,
                   default_model=MODEL) as api:
        events = list(api.stream(RequestConfig(system_prompt="s", messages=user(),
                                               connection=named)))
        assert events[-1].data["text"] == "There." and reads == []
        assert claude.last.headers["authorization"] == f"Bearer {KEY}"
        small = Connection("anthropic", claude.url, KEY, context_window=100)
        refused = api.request(RequestConfig(system_prompt="s" * 600, messages=user(),
                                            connection=small))
        assert (refused.error, reads, len(claude.requests)) == ("context_too_small", [], 1)
        assert KEY not in repr(RequestConfig(system_prompt="s", messages=[], connection=named))
