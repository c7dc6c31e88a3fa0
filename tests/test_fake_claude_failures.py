"""The Claude fake's failures (HTTP errors, error events, drops, hangs) as the SDK sees them."""
import threading

import anthropic
import httpx2
import pytest

from tests.fakes.claude import FakeClaude, replies
from tests.test_fake_claude import create, stream

CLOSE_DEADLINE = 30.0  # a deadline, not a speed: a hang lasts an hour unless close() ends it


@pytest.fixture
def sdk(claude):
    """The real SDK pointed at the fake, without retries."""
    with anthropic.Anthropic(api_key="test-key", base_url=claude.url, max_retries=0) as client:
        yield client


ERRORS = [
    (replies.bad_request("messages: bad"), anthropic.BadRequestError, "invalid_request_error"),
    (replies.authentication_error(), anthropic.AuthenticationError, "authentication_error"),
    (replies.credit_exhausted(), anthropic.BadRequestError, "invalid_request_error"),
    (replies.rate_limited(retry_after=7), anthropic.RateLimitError, "rate_limit_error"),
    (replies.server_error(), anthropic.InternalServerError, "api_error"),
    (replies.overloaded(), anthropic.OverloadedError, "overloaded_error"),
]


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("reply, error, kind", ERRORS)
def test_http_errors_raise_the_matching_sdk_exception(claude, sdk, reply, error, kind, streaming):
    claude.enqueue(reply)
    with pytest.raises(error) as caught:
        if streaming:
            with stream(sdk) as events:
                list(events)
        else:
            create(sdk)
    assert caught.value.type == kind and caught.value.status_code == reply.status
    assert caught.value.body["request_id"] == caught.value.request_id == claude.last.request_id
    assert caught.value.response.headers.get("retry-after") == reply.headers.get("retry-after")
    if reply.message == replies.CREDIT_MESSAGE:
        assert "credit balance is too low" in caught.value.api_message


def test_retry_after_is_honoured_by_the_sdk(claude):
    claude.enqueue(replies.overloaded(retry_after_ms=5), "Back again.")
    with anthropic.Anthropic(api_key="k", base_url=claude.url, max_retries=1) as client:
        assert create(client).content[0].text == "Back again."
    assert len(claude.requests) == 2


def test_error_event_mid_stream_raises_status_error_with_status_200(claude, sdk):
    claude.enqueue(replies.stream_error("overloaded_error", "Overloaded", after_events=4))
    seen = []
    with pytest.raises(anthropic.APIStatusError) as caught, stream(sdk) as events:
        seen.extend(event.type for event in events)
    assert caught.value.status_code == 200 and caught.value.type == "overloaded_error"
    assert "text" in seen and "message_stop" not in seen


def test_dropped_stream_raises_a_transport_error(claude, sdk):
    claude.enqueue(replies.drop(after_events=4))
    with pytest.raises(httpx2.TransportError), stream(sdk) as events:
        list(events)


def test_dropped_json_body_raises_connection_error(claude, sdk):
    claude.enqueue(replies.drop())
    with pytest.raises(anthropic.APIConnectionError):
        create(sdk)


def test_unfinished_stream_has_no_stop_reason(claude, sdk):
    claude.enqueue(replies.unfinished())
    with stream(sdk) as events:
        names = [event.type for event in events]
        final = events.get_final_message()
    assert final.stop_reason is None and "message_stop" not in names and final.content[0].text


@pytest.mark.parametrize("after_headers, error, timeout", [
    (False, anthropic.APITimeoutError, 0.3),  # no headers in time: the SDK's own timeout error
    # headers, then silence: a raw httpx2 timeout mid-stream (the headers must come in time, so
    # the timeout leaves a loaded machine room to send them)
    (True, httpx2.ReadTimeout, 3.0),
])
def test_hang_times_the_client_out_and_does_not_block_close(after_headers, error, timeout):
    with FakeClaude() as fake:
        fake.enqueue(replies.hang(after_headers=after_headers))
        with anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0,
                                 timeout=timeout) as sdk, pytest.raises(error), stream(sdk) as events:
            list(events)
        assert fake.wait_for_disconnect(index=0)
        # the hanging reply never ends by itself: close() must release it, not wait for it
        closer = threading.Thread(target=fake.close)
        closer.start()
        closer.join(timeout=CLOSE_DEADLINE)
        assert not closer.is_alive(), "close() waits for the hanging reply"


def test_close_releases_a_waiting_reply_while_the_client_still_waits():
    with FakeClaude() as fake:
        fake.enqueue(replies.hang())
        with anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0, timeout=5) as sdk:
            failure = []
            worker = threading.Thread(target=lambda: failure.append(_attempt(sdk)))
            worker.start()
            fake.wait_for_requests(1)
            fake.close()
            worker.join(timeout=5)
    assert failure and isinstance(failure[0], anthropic.APIConnectionError)


def _attempt(sdk):
    try:
        create(sdk)
    except anthropic.APIError as error:
        return error
    return None
