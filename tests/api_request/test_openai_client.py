"""The OpenAI-compatible path of ApiClient: the real `openai` SDK against FakeOpenAI over HTTP."""
import threading

import pytest

from src.utils.api_request import ApiClient, CancelSignal, Connection, RequestConfig, ToolHandler
from tests.api_request.conftest import READ_FILE, TOOLS, WRITE_FILE, user
from tests.fakes.openai_compat import FakeOpenAI, replies

MODEL = "llama3.2:3b"
KEY = "sk-or-test-0123456789abcdefSECRET"


def client_for(fake, key=None, window=None, **extra) -> ApiClient:
    connection = Connection("openai_compatible", fake.url, key, window)
    return ApiClient(connection_source=lambda: connection, timeout=extra.pop("timeout", 5.0),
                     max_retries=extra.pop("max_retries", 0), default_model=MODEL, **extra)


@pytest.fixture
def oai(openai_fake):
    client = client_for(openai_fake)
    yield client
    client.close()


def config(**fields):
    return RequestConfig(system_prompt=fields.pop("system", "You are Ada."),
                         messages=fields.pop("messages", user()), **fields)


def test_request_returns_text_usage_and_stop_reason(oai, openai_fake):
    openai_fake.enqueue(replies.text("Hello there.", usage={"output_tokens": 3}))
    result = oai.request(config())
    assert (result.success, result.content, result.stop_reason) == (True, "Hello there.", "end_turn")
    assert result.usage["output_tokens"] == 3 and result.usage["input_tokens"] > 0
    assert openai_fake.last.body["messages"][0] == {"role": "system", "content": "You are Ada."}
    assert "authorization" not in openai_fake.last.headers  # a local endpoint: no key, no header


def test_a_key_is_sent_as_bearer_and_a_wrong_one_is_authentication_failed(key_hygiene):
    key_hygiene.add_secret(KEY)
    with FakeOpenAI(api_key=KEY) as fake:
        fake.default = replies.text("ok")
        with client_for(fake, KEY) as good, client_for(fake, KEY[:-1] + "X") as bad:
            assert good.request(config()).success
            result = bad.request(config())
    assert result.error == "authentication_failed" and KEY not in result.error_message


def test_stream_yields_chunks_then_done_with_usage_requested(oai, openai_fake):
    openai_fake.enqueue(replies.text("One two three four.", usage={"output_tokens": 4}))
    events = list(oai.stream(config()))
    assert [e.data for e in events if e.event_type == "chunk"] == ["One two ", "three four."]
    assert events[-1].event_type == "done" and events[-1].data["usage"]["output_tokens"] == 4
    assert openai_fake.last.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("style", ["openai", "ollama", "vllm", "openrouter"])
def test_an_unknown_model_is_model_not_found_in_every_error_dialect(oai, openai_fake, style):
    openai_fake.error_style = style
    result = oai.request(config(model="no-such-model"))
    events = list(oai.stream(config(model="no-such-model")))
    assert result.error == "model_not_found" and not result.retryable
    assert events[-1].data["code"] == "model_not_found"


@pytest.mark.parametrize("style", ["openai", "ollama", "vllm", "openrouter"])
@pytest.mark.parametrize("status, code", [(401, "authentication_failed"),
                                          (403, "authentication_failed"),
                                          (429, "rate_limited"), (500, "api_error"),
                                          (503, "overloaded")])
def test_http_errors_map_to_stable_codes(oai, openai_fake, style, status, code):
    openai_fake.error_style = style
    openai_fake.enqueue(replies.http_error(status, "x", "upstream said no"))
    events = list(oai.stream(config()))
    assert events[-1].event_type == "error" and events[-1].data["code"] == code
    if style == "openrouter":
        assert "FakeProvider" in events[-1].data["message"]


def test_retry_after_within_the_bound_is_honoured_once(openai_fake):
    openai_fake.enqueue(replies.rate_limited(retry_after_ms=50), replies.text("after the wait"))
    with client_for(openai_fake, max_retries=1) as client:
        assert client.request(config()).content == "after the wait"


def test_retry_after_beyond_the_bound_surfaces_at_once(openai_fake):
    openai_fake.enqueue(replies.rate_limited(retry_after=3600), replies.text("never"))
    with client_for(openai_fake, max_retries=2) as client:
        result = client.request(config())
    assert result.error == "rate_limited" and "3600" in result.error_message
    assert len(openai_fake.requests) == 1


def test_an_error_inside_the_stream_is_an_error_event(oai, openai_fake):
    openai_fake.enqueue(replies.stream_error("overloaded_error", "busy", after_events=3),
                        replies.stream_error("api_error", "it broke", after_events=3))
    events = list(oai.stream(config()))
    assert events[-1].event_type == "error" and events[-1].data["code"] == "overloaded"
    events = list(oai.stream(config()))
    assert events[-1].data["code"] == "api_error" and "it broke" in events[-1].data["message"]


def test_a_dropped_connection_is_connection_error(oai, openai_fake):
    openai_fake.enqueue(replies.drop(after_events=3))
    events = list(oai.stream(config()))
    assert events[-1].data["code"] == "connection_error"


def test_a_stream_without_finish_reason_is_not_complete(oai, openai_fake):
    openai_fake.enqueue(replies.unfinished())
    events = list(oai.stream(config()))
    assert events[-1].event_type == "error" and events[-1].data["code"] == "connection_error"


def test_a_hanging_server_times_out(openai_fake):
    openai_fake.enqueue(replies.hang(after_headers=True))
    with client_for(openai_fake, timeout=0.3) as client:
        events = list(client.stream(config()))
    assert events[-1].data["code"] == "timeout"


def test_cancel_closes_the_upstream_connection(oai, openai_fake):
    gate, cancel = threading.Event(), CancelSignal()
    openai_fake.enqueue(replies.gated(replies.text("Part one. Part two."), gate))
    seen = []
    for event in oai.stream(config(), cancel):
        seen.append(event)
        if event.event_type == "chunk":
            cancel.set()
    gate.set()
    assert seen[-1].event_type == "done" and seen[-1].data["stop_reason"] == "cancelled"
    openai_fake.wait_for_disconnect(index=0)


def test_not_configured_without_a_base_url():
    client = ApiClient(connection_source=lambda: Connection("openai_compatible", None, None))
    assert not client.is_ready
    assert client.request(config()).error == "not_configured"


def test_cached_tokens_are_reported_when_the_prefix_repeats(oai, openai_fake):
    openai_fake.default = replies.text("ok")
    long_system = "You are Ada. " * 50
    first = oai.request(config(system=long_system))
    second = oai.request(config(system=long_system, messages=user("Another question")))
    assert "cached_tokens" not in first.usage and second.usage["cached_tokens"] > 0
    bodies = [r.body["messages"][0] for r in openai_fake.requests]
    assert bodies[0] == bodies[1]


# -- tools --

def _toolbox(log):
    handler = ToolHandler()
    handler.register(READ_FILE, lambda call: (log.append(call) or True, "# Memory\n"))
    handler.register(WRITE_FILE, lambda call: (log.append(call) or True, "written"))
    return handler


def test_tool_loop_answers_each_call_in_order(oai, openai_fake):
    calls = []
    openai_fake.enqueue(
        replies.tool_use([("read_file", {"filename": "memory.md"}),
                          ("write_file", {"filename": "memory.md", "content": "Likes tea"})]),
        replies.text("Saved."))
    result = oai.tool_request(config(tools=TOOLS), _toolbox(calls))
    assert result.success and result.content == "Saved."
    assert [c.name for c in calls] == ["read_file", "write_file"]
    tool_messages = [m for m in openai_fake.last.body["messages"] if m["role"] == "tool"]
    ids = [c["id"] for c in openai_fake.last.body["messages"][2]["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_messages] == ids


@pytest.mark.parametrize("quirk", ["no_index", "reused_index", "byte_split"])
def test_streamed_tool_deltas_are_accumulated_whatever_the_server_does(oai, openai_fake, quirk):
    openai_fake.quirks = {quirk}
    tricky = '{"filename": "memory.md", "content": "caf\\u00e9 \\"quoted\\"\\nnext ü"}'
    openai_fake.enqueue(replies.tool_use([("write_file", tricky),
                                          ("read_file", {"filename": "soul.md"})],
                                         fragment_sizes=[3, 1, 2, 5]))
    done = list(oai.stream(config(tools=TOOLS)))[-1].data
    assert [(c.name, c.arguments) for c in done["tool_calls"]] == [
        ("write_file", {"filename": "memory.md", "content": 'café "quoted"\nnext ü'}),
        ("read_file", {"filename": "soul.md"})]
    assert len({c.id for c in done["tool_calls"]}) == 2


def test_a_call_cut_by_length_is_never_executed(oai, openai_fake):
    calls = []
    cut = replies.truncated_tool_use("write_file", '{"filename": "memory.md", "content": "Lik')
    openai_fake.enqueue(cut, cut)
    result = oai.tool_request(config(tools=TOOLS, max_tokens=2000), _toolbox(calls))
    assert result.error == "truncated_tool_call" and calls == []
    events = list(client_stream(oai, openai_fake, cut))
    assert events[-1].data["tool_calls"] == [] and events[-1].data["invalid_tool_calls"]


def client_stream(client, fake, reply):
    fake.enqueue(reply)
    return client.stream(config(tools=TOOLS))


def test_a_tool_call_written_as_text_is_recovered(oai, openai_fake):
    calls = []
    openai_fake.quirks = {"tool_as_text"}
    openai_fake.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                          "content": "Likes tea"})]),
                        replies.text("Done."))
    result = oai.tool_request(config(tools=TOOLS), _toolbox(calls))
    assert result.success and [c.arguments["content"] for c in calls] == ["Likes tea"]


def test_a_text_call_to_an_unknown_tool_is_a_clear_error(oai, openai_fake):
    openai_fake.enqueue(replies.text('{"name": "delete_everything", "arguments": {}}'))
    result = oai.tool_request(config(tools=TOOLS), _toolbox([]))
    assert result.error == "tools_unsupported" and "delete_everything" in result.error_message


def test_refused_tools_fall_back_to_a_json_edit_plan(oai, openai_fake):
    calls = []
    openai_fake.quirks = {"tools_refused"}
    plan = ('{"calls": [{"name": "write_file", "arguments": {"filename": "memory.md", '
            '"content": "Likes tea"}}], "summary": "Noted the tea."}')
    openai_fake.enqueue(replies.text(plan))
    result = oai.tool_request(config(tools=TOOLS), _toolbox(calls))
    assert result.success and result.content == "Noted the tea."
    assert [c.arguments["content"] for c in calls] == ["Likes tea"]
    assert openai_fake.last.body["response_format"] == {"type": "json_object"}
    assert "tools" not in openai_fake.last.body


def test_without_json_mode_the_plan_comes_from_a_fenced_block(oai, openai_fake):
    calls = []
    openai_fake.quirks = {"tools_refused", "no_json_mode"}
    openai_fake.enqueue(replies.text('Here:\n```json\n{"calls": [{"name": "read_file", '
                                     '"arguments": {"filename": "soul.md"}}]}\n```'))
    assert oai.tool_request(config(tools=TOOLS), _toolbox(calls)).success
    assert [c.name for c in calls] == ["read_file"]


def test_no_tools_and_no_usable_plan_is_tools_unsupported(oai, openai_fake):
    calls = []
    openai_fake.quirks = {"tools_refused"}
    openai_fake.enqueue(replies.text("I would love to help with your memory!"))
    result = oai.tool_request(config(tools=TOOLS), _toolbox(calls))
    assert result.error == "tools_unsupported" and calls == []
    assert "cannot update memory" in result.error_message


# -- bad endpoints --

def test_an_html_page_is_not_an_api(oai, openai_fake):
    openai_fake.quirks = {"html"}
    result = oai.request(config())
    events = list(oai.stream(config()))
    for code, message in ((result.error, result.error_message),
                          (events[-1].data["code"], events[-1].data["message"])):
        assert code == "api_error" and "/v1" in message


def test_non_json_stream_lines_are_a_clear_error(oai, openai_fake):
    openai_fake.quirks = {"garbage_lines"}
    openai_fake.enqueue(replies.text("Hello"))
    events = list(oai.stream(config()))
    assert events[-1].event_type == "error" and events[-1].data["code"] == "api_error"


@pytest.mark.parametrize("quirk", ["endless", "huge"])
def test_an_endless_or_huge_answer_is_cut_with_an_error(oai, openai_fake, quirk):
    openai_fake.quirks = {quirk}
    events = list(oai.stream(config(max_tokens=16)))
    assert events[-1].event_type == "error"
    if quirk == "huge":
        assert oai.request(config()).error == "api_error"


def test_an_unreachable_base_url_is_connection_error():
    connection = Connection("openai_compatible", "http://127.0.0.1:9/v1", None)
    with ApiClient(connection_source=lambda: connection, max_retries=0, timeout=2) as client:
        events = list(client.stream(config()))
    assert events[-1].data["code"] == "connection_error"


def test_a_prompt_that_cannot_fit_is_context_too_small(openai_fake):
    with client_for(openai_fake, window=512) as client:
        result = client.request(config(system="memory " * 400, max_tokens=100))
    assert result.error == "context_too_small" and "512" in result.error_message
    assert openai_fake.requests == []


def test_old_history_is_trimmed_but_never_the_system_prompt(openai_fake):
    openai_fake.default = replies.text("ok")
    history = []
    for i in range(30):
        history += [{"role": "user", "content": f"question {i} " * 20},
                    {"role": "assistant", "content": f"answer {i} " * 20}]
    history.append({"role": "user", "content": "newest"})
    with client_for(openai_fake, window=1200) as client:
        assert client.request(config(system="SYSTEM " * 100, messages=history)).success
    sent = openai_fake.last.body["messages"]
    assert sent[0]["content"] == "SYSTEM " * 100 and sent[-1]["content"] == "newest"
    assert sent[1]["role"] == "user" and len(sent) < len(history)


@pytest.mark.parametrize("quirk", ["no_usage", "no_done"])
def test_a_stream_without_usage_or_done_still_completes(oai, openai_fake, quirk):
    openai_fake.quirks = {quirk}
    openai_fake.enqueue(replies.text("Short answer.", usage={"output_tokens": 2}))
    done = list(oai.stream(config()))[-1]
    assert done.event_type == "done" and done.data["text"] == "Short answer."
    assert done.data["usage"] == ({} if quirk == "no_usage" else
                                  {"input_tokens": done.data["usage"]["input_tokens"],
                                   "output_tokens": 2})


def test_hostile_tool_text_is_refused_not_crashed(oai, openai_fake):
    openai_fake.enqueue(replies.text('{"name": "write_file", "arguments": "[' * 2000 + "]"),
                        replies.text('[{"name": "write_file", "arguments": 5}]'))
    first = oai.tool_request(config(tools=TOOLS), _toolbox([]))
    second = oai.tool_request(config(tools=TOOLS), _toolbox([]))
    assert first.success and first.content.startswith('{"name"')  # not JSON: plain text
    assert second.error == "tools_unsupported"


def _sdk_create_stream(fake, key, body: dict) -> None:
    """The same request through the SDK's own `chat.completions.create(stream=True)`."""
    import openai
    fields = {name: value for name, value in body.items() if name != "stream"}
    with (openai.OpenAI(api_key=key, base_url=fake.url, max_retries=0, timeout=5.0) as sdk,
          sdk.chat.completions.create(stream=True, **fields) as stream):
        for _ in stream:
            pass


@pytest.mark.parametrize("fields", [
    {},
    {"tools": TOOLS, "tool_choice": "auto", "temperature": 0.4, "disable_parallel_tool_use": True,
     "messages": [*user("Hi"), {"role": "assistant", "content": "Hello."}, *user("Again")],
     "prefill": "Well,"},
])
def test_a_streamed_request_is_sent_as_the_sdks_create_sends_it(openai_fake, key_hygiene, fields):
    """The stream is sent with the client's `post` (not `create`, whose parameter walk cost
    most of the path's CPU): the body's bytes and the headers are what `create` sends."""
    key_hygiene.add_secret(KEY)
    openai_fake.enqueue(replies.text("One two."), replies.text("One two."))
    with client_for(openai_fake, KEY) as client:
        assert list(client.stream(config(**fields)))[-1].event_type == "done"
    ours = openai_fake.last
    _sdk_create_stream(openai_fake, KEY, ours.body)
    theirs = openai_fake.last
    assert ours.raw == theirs.raw and ours.body["stream"] is True
    assert ours.headers == theirs.headers  # the key as bearer, the SDK's own headers


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_a_request_is_sent_as_the_sdks_create_sends_it(openai_fake, key_hygiene, tools):
    """The same for a request without streaming (titles, cortex updates, the edit plan)."""
    import openai
    key_hygiene.add_secret(KEY)
    openai_fake.enqueue(replies.text("Done."), replies.text("Done."))
    with client_for(openai_fake, KEY) as client:
        result = client.request(config(tools=tools, temperature=0.2))
    assert (result.success, result.content, result.stop_reason) == (True, "Done.", "end_turn")
    ours = openai_fake.last
    with openai.OpenAI(api_key=KEY, base_url=openai_fake.url, max_retries=0, timeout=5.0) as sdk:
        sdk.chat.completions.create(**ours.body)
    theirs = openai_fake.last
    assert ours.raw == theirs.raw and "stream" not in ours.body
    assert ours.headers == theirs.headers


def test_a_stream_without_a_key_sends_no_authorization(oai, openai_fake):
    openai_fake.enqueue(replies.text("One two."))
    assert list(oai.stream(config()))[-1].event_type == "done"
    assert "authorization" not in openai_fake.last.headers
