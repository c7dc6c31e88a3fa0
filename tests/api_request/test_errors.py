"""Every upstream failure becomes a §4 code with a readable message, streaming or not."""
import socket

import pytest

from src.utils.api_request import ApiClient, RequestConfig
from tests.api_request.conftest import KEY, MODEL, user
from tests.fakes.claude import FakeClaude, replies

CONFIG = RequestConfig(system_prompt="s", messages=user("Hi"))

HTTP_FAILURES = [
    (lambda: replies.authentication_error(), "authentication_failed", False),
    (lambda: replies.http_error(403, "permission_error", "Not allowed"), "authentication_failed", False),
    (lambda: replies.credit_exhausted(), "credit_balance_exhausted", False),
    (lambda: replies.http_error(402, "billing_error", "Payment required"), "credit_balance_exhausted", False),
    (lambda: replies.rate_limited(), "rate_limited", True),
    (lambda: replies.overloaded(), "overloaded", True),
    (lambda: replies.http_error(504, "timeout_error", "Gateway timeout"), "timeout", True),
    (lambda: replies.bad_request("messages: roles must alternate"), "invalid_request", False),
    (lambda: replies.http_error(404, "not_found_error", "model: claude-nope"), "invalid_request", False),
    (lambda: replies.server_error(), "api_error", True),
    (lambda: replies.http_error(503, "api_error", "Unavailable"), "api_error", True),
]

STREAM_ERRORS = [
    ("overloaded_error", "overloaded", True),
    ("rate_limit_error", "rate_limited", True),
    ("api_error", "api_error", True),
    ("invalid_request_error", "invalid_request", False),
    ("authentication_error", "authentication_failed", False),
    ("billing_error", "credit_balance_exhausted", False),
    ("timeout_error", "timeout", True),
]


def stream_error_of(events):
    *rest, last = events
    assert last.event_type == "error", last
    assert all(event.event_type == "chunk" for event in rest)
    return last.data


@pytest.mark.parametrize("reply, code, retryable", HTTP_FAILURES)
def test_http_errors_map_to_codes_for_request(api, claude, reply, code, retryable):
    claude.enqueue(reply())

    result = api.request(CONFIG)

    assert (result.success, result.error, result.retryable) == (False, code, retryable)
    assert result.error_message and KEY not in result.error_message


@pytest.mark.parametrize("reply, code, retryable", HTTP_FAILURES)
def test_http_errors_map_to_codes_for_stream(api, claude, reply, code, retryable):
    claude.enqueue(reply())

    error = stream_error_of(list(api.stream(CONFIG)))

    assert (error["code"], error["retryable"]) == (code, retryable)
    assert error["message"] and KEY not in error["message"]


@pytest.mark.parametrize("error_type, code, retryable", STREAM_ERRORS)
def test_mid_stream_error_events_map_by_type_not_status(api, claude, error_type, code, retryable):
    claude.enqueue(replies.stream_error(error_type, "Something happened", after_events=4))

    events = list(api.stream(CONFIG))

    error = stream_error_of(events)
    assert (error["code"], error["retryable"]) == (code, retryable)
    assert events[0].event_type == "chunk"


def test_dropped_connection_mid_stream_is_a_retryable_connection_error(api, claude):
    claude.enqueue(replies.drop(after_events=4))

    events = list(api.stream(CONFIG))

    assert stream_error_of(events)["code"] == "connection_error"
    assert stream_error_of(events)["retryable"] is True
    assert events[0].event_type == "chunk"


def test_dropped_connection_during_a_json_body_is_a_connection_error(api, claude):
    claude.enqueue(replies.drop())

    result = api.request(CONFIG)

    assert result.error == "connection_error" and result.retryable


def test_a_stream_that_ends_before_the_stop_reason_is_an_error_not_done(api, claude):
    claude.enqueue(replies.unfinished())

    events = list(api.stream(CONFIG))

    error = stream_error_of(events)
    assert error["code"] == "connection_error" and error["retryable"] is True
    assert "before it was complete" in error["message"]


def test_an_unreachable_server_is_a_connection_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with ApiClient(api_key=KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0,
                   default_model=MODEL) as client:
        result = client.request(CONFIG)
        error = stream_error_of(list(client.stream(CONFIG)))

    assert result.error == "connection_error" and error["code"] == "connection_error"
    assert result.error_message == error["message"]


def test_a_server_that_does_not_answer_in_time_is_a_timeout(claude):
    claude.enqueue(replies.hang(), replies.hang(after_headers=True))
    with ApiClient(api_key=KEY, base_url=claude.url, timeout=0.2, max_retries=0,
                   default_model=MODEL) as client:
        result = client.request(CONFIG)
        error = stream_error_of(list(client.stream(CONFIG)))

    assert (result.error, result.retryable) == ("timeout", True)
    assert error["code"] == "timeout"


def test_not_configured_without_a_key(claude):
    client = ApiClient(base_url=claude.url)

    assert client.request(CONFIG).error == "not_configured"
    assert next(iter(client.stream(CONFIG))).data == {
        "code": "not_configured", "message": "No API key configured: add one in Settings.",
        "retryable": False}
    assert claude.requests == []


def test_the_key_never_appears_in_error_messages_even_if_upstream_echoes_it(api, claude):
    claude.enqueue(replies.bad_request(f"messages: bad key {KEY}"),
                   replies.stream_error("invalid_request_error", f"echo {KEY}", after_events=3))

    result = api.request(CONFIG)
    error = stream_error_of(list(api.stream(CONFIG)))

    assert result.error == "invalid_request"
    assert KEY not in result.error_message and "[redacted]" in result.error_message
    assert KEY not in error["message"]


def test_a_wrong_key_is_reported_without_the_key():
    wrong = "sk-ant-wrong-key-000000000000"
    with FakeClaude(api_key=KEY) as fake, ApiClient(api_key=wrong, base_url=fake.url, max_retries=0,
                                                    default_model=MODEL) as client:
        result = client.request(CONFIG)
        checked = client.check_key(wrong)

    assert result.error == checked.error == "authentication_failed"
    assert wrong not in result.error_message and wrong not in checked.error_message
    assert wrong not in repr(result) and wrong not in repr(checked)


def test_overloaded_then_success_is_retried_by_the_sdk(claude):
    claude.enqueue(replies.overloaded(retry_after_ms=1), replies.text("Back again."),
                   replies.overloaded(retry_after_ms=1), replies.text("Streamed again."))
    with ApiClient(api_key=KEY, base_url=claude.url, max_retries=1, default_model=MODEL) as client:
        result = client.request(CONFIG)
        events = list(client.stream(CONFIG))

    assert result.success and result.content == "Back again."
    assert events[-1].event_type == "done" and events[-1].data["text"] == "Streamed again."
    assert len(claude.requests) == 4


def test_a_retry_after_beyond_the_bound_fails_at_once_instead_of_waiting(claude):
    claude.enqueue(replies.rate_limited(retry_after=120), replies.text("Too late."))
    with ApiClient(api_key=KEY, base_url=claude.url, max_retries=2, default_model=MODEL) as client:
        result = client.request(CONFIG)

    assert result.error == "rate_limited" and result.retryable
    assert "120" in result.error_message
    assert len(claude.requests) == 1 and claude.pending == 1
