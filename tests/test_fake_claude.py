"""The Claude fake, checked through the real anthropic SDK: if the SDK reads it, so will we."""
import re
import threading
import time

import anthropic
import httpx2
import pytest

from tests.fakes.claude import replies

MODEL = "claude-sonnet-5-5"
HI = [{"role": "user", "content": "Hi"}]
TOOLS = [{"name": "get_weather", "description": "Weather for a place",
          "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}}]


@pytest.fixture
def sdk(claude):
    """The real SDK pointed at the fake, without retries."""
    with anthropic.Anthropic(api_key="test-key", base_url=claude.url, max_retries=0) as client:
        yield client


def create(sdk, **kwargs):
    return sdk.messages.create(**{"model": MODEL, "max_tokens": 256, "messages": HI, **kwargs})


def stream(sdk, **kwargs):
    return sdk.messages.stream(**{"model": MODEL, "max_tokens": 256, "messages": HI, **kwargs})


def test_text_as_json(claude, sdk):
    claude.enqueue(replies.text("Hello there!", usage={"output_tokens": 5}))
    message = create(sdk, system="Be brief.")
    assert message.content[0].text == "Hello there!"
    usage = message.usage
    assert (message.stop_reason, message.model, usage.output_tokens) == ("end_turn", MODEL, 5)
    assert usage.input_tokens > 0 and re.fullmatch(r"msg_\w{24}", message.id)
    request = claude.wait_for_requests(1)[0]
    assert (request.path, request.stream, request.system) == ("/v1/messages", False, "Be brief.")
    assert request.messages == HI and request.rejected is None


def test_text_as_stream_arrives_in_the_given_chunks(claude, sdk):
    claude.enqueue(replies.text("Hello there!", chunks=["Hel", "lo there!"]))
    with stream(sdk) as events:
        names = [event.type for event in events]
        final = events.get_final_message()
    assert [n for n in names if n in ("content_block_delta", "message_stop")] == [
        "content_block_delta", "content_block_delta", "message_stop"]
    assert final.content[0].text == "Hello there!" and final.stop_reason == "end_turn"
    assert claude.last.stream is True


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("name, stop_reason, content", [
    ("basic_response.sse", "end_turn", "Hello there!"),
    ("tool_use_response.sse", "tool_use", {"location": "Paris"}),
    ("refusal_response.sse", "refusal", ""),
])
def test_fixture_replayed_through_the_sdk_stream(claude, sdk, name, stop_reason, content,
                                                 complete):
    claude.enqueue(replies.fixture(name, complete=complete))
    with stream(sdk) as events:
        names = [event.type for event in events]
        final = events.get_final_message()
    last = final.content[-1]
    assert final.stop_reason == stop_reason
    assert (last.input if last.type == "tool_use" else last.text) == content
    assert ("message_stop" in names) is complete  # the files lack the final blank line


def test_fixture_is_replayed_byte_for_byte(claude):
    raw = (replies.FIXTURES / "tool_use_response.sse").read_bytes()
    claude.enqueue(replies.fixture("tool_use_response.sse"))
    response = httpx2.post(f"{claude.url}/v1/messages", headers={
        "x-api-key": "k", "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "max_tokens": 9, "messages": HI, "stream": True})
    assert response.content == raw


def test_fixture_for_a_json_request_is_assembled(claude, sdk):
    claude.enqueue(replies.fixture("tool_use_response.sse"))
    message = create(sdk)
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].input == {"location": "Paris"}


def test_tool_input_fragments_split_awkwardly_and_reassemble(claude, sdk):
    args = {"filename": "memory.md", "content": "Mag Kaffee, \"schwarz\" ✓"}
    claude.enqueue(replies.tool_use([("write_file", args), ("read_file", {"filename": "a.md"})],
                                    text="Saving."))
    with stream(sdk, tools=TOOLS) as events:
        fragments = [e.delta.partial_json for e in events
                     if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
        final = events.get_final_message()
    calls = [b for b in final.content if b.type == "tool_use"]
    assert [(c.name, c.input) for c in calls] == [("write_file", args),
                                                  ("read_file", {"filename": "a.md"})]
    assert all(re.fullmatch(r"toolu_[A-Za-z0-9]{24}", c.id) for c in calls)
    assert fragments[0] == "" and '{"fi' in fragments
    assert any(f.count('"') % 2 for f in fragments)  # some cut falls inside a string
    assert final.stop_reason == "tool_use"


def test_tool_use_as_json_and_fresh_ids_per_answer(claude, sdk):
    claude.default = replies.tool_use(("get_weather", {"location": "Paris"}))
    first, second = create(sdk, tools=TOOLS), create(sdk, tools=TOOLS)
    assert first.content[0].input == {"location": "Paris"} and first.stop_reason == "tool_use"
    assert first.content[0].id != second.content[0].id


@pytest.mark.parametrize("streaming", [False, True])
def test_truncated_tool_call_stops_on_max_tokens_with_partial_input(claude, sdk, streaming):
    claude.enqueue(replies.truncated_tool_use("write_file", '{"filename": "memory.md", "cont'))
    if streaming:
        with stream(sdk) as events:
            message = events.get_final_message()
    else:
        message = create(sdk)
    assert message.stop_reason == "max_tokens"
    assert message.content[0].input == {"filename": "memory.md"}


def test_history_with_unanswered_tool_use_is_rejected_and_recorded(claude, sdk):
    claude.enqueue(replies.tool_use(("get_weather", {"location": "Paris"})), "It is sunny.")
    first = create(sdk, tools=TOOLS)
    call = first.content[0]
    history = HI + [{"role": "assistant", "content": [call.model_dump(exclude_none=True)]}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(sdk, tools=TOOLS, messages=history + [{"role": "user", "content": "And?"}])
    assert call.id in caught.value.api_message and claude.last.rejected
    answer = {"type": "tool_result", "tool_use_id": call.id, "content": "sunny, 24 °C"}
    done = create(sdk, tools=TOOLS, messages=history + [
        {"role": "user", "content": [answer, {"type": "text", "text": "Short, please."}]}])
    assert done.content[0].text == "It is sunny." and claude.last.rejected is None


def test_event_delay_spaces_the_events(claude, sdk):
    claude.enqueue(replies.text("a b c d e f", event_delay=0.03))
    started = time.monotonic()
    with stream(sdk) as events:
        list(events)
    assert time.monotonic() - started >= 0.03 * 8  # 10 events (3 deltas), 9 gaps


def test_delayed_reply_arrives_after_its_delay(claude, sdk):
    claude.enqueue(replies.delayed(replies.text("Late but fine."), 0.1, after_headers=True))
    started = time.monotonic()
    with stream(sdk) as events:
        assert events.get_final_message().content[0].text == "Late but fine."
    assert time.monotonic() - started >= 0.1


def test_gated_stream_records_the_client_leaving(claude, sdk):
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("One two three four five six"), gate))
    with stream(sdk) as events:
        first = next(event for event in events if event.type == "text")
    assert first.text == "One two "
    assert claude.wait_for_disconnect(index=0)
    gate.set()


def test_gated_stream_continues_when_the_gate_opens(claude, sdk):
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("One two three four"), gate))
    with stream(sdk) as events:
        texts = [next(event.text for event in events if event.type == "text")]
        gate.set()
        texts += [event.text for event in events if event.type == "text"]
    assert texts == ["One two ", "three four"] and claude.disconnects == []


def test_scripted_model_reacts_to_history(claude, sdk):
    def model(body):
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last[0]["type"] == "tool_result":
            return f"The weather: {last[0]['content']}"
        return replies.tool_use(("get_weather", {"location": "Paris"}))

    claude.default = replies.scripted(model)
    call = create(sdk, tools=TOOLS).content[0]
    history = HI + [{"role": "assistant", "content": [call.model_dump(exclude_none=True)]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": call.id, "content": "rain"}]}]
    assert create(sdk, tools=TOOLS, messages=history).content[0].text == "The weather: rain"


def test_a_crashing_script_answers_500_and_is_kept(claude, sdk):
    claude.enqueue(replies.scripted(lambda body: 1 / 0))
    with pytest.raises(anthropic.InternalServerError):
        create(sdk)
    assert isinstance(claude.errors.pop(), ZeroDivisionError)


def test_nothing_scripted_answers_500(claude, sdk):
    with pytest.raises(anthropic.InternalServerError):
        create(sdk)
    assert claude.last.rejected == "fake: nothing scripted"


def test_wrong_api_key_is_refused(claude):
    claude.api_key = "right"
    claude.enqueue("never sent")
    with anthropic.Anthropic(api_key="wrong", base_url=claude.url, max_retries=0) as client, \
            pytest.raises(anthropic.AuthenticationError):
        create(client)
    assert claude.pending == 1


def test_prompt_cache_is_written_then_read(claude, sdk):
    claude.default = replies.text("ok")
    system = [{"type": "text", "text": "You are a persona. " * 50,
               "cache_control": {"type": "ephemeral"}}]
    first, second = create(sdk, system=system).usage, create(sdk, system=system).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0 and second.input_tokens > 0


def test_count_tokens_and_models(claude, sdk):
    assert sdk.messages.count_tokens(model=MODEL, messages=HI).input_tokens > 0
    assert MODEL in [model.id for model in sdk.models.list()]


def test_wait_for_requests_fails_after_its_deadline(claude):
    with pytest.raises(AssertionError):
        claude.wait_for_requests(1, timeout=0.05)
