"""Where a key may go (issue 21), end to end over real HTTP: the app under a live server, the
fakes as the keys' own endpoints and a loopback listener recording everything that reaches it.
The attack of the issue in full, for both providers and both kinds of key: name the listener in
the connection test, then in the settings, then chat."""
import http.client
import json
from contextlib import closing
from urllib.parse import urlsplit

import pytest

from src.utils.api_request import DEFAULT_MODEL
from tests.chat.chat_support import SseStream
from tests.fakes.claude import replies
from tests.fakes.openai_compat import replies as openai_replies
from tests.support.listener import Answer, Listener

from .keys import ENV_KEY, OPENAI_KEY, OTHER_KEY, STORED_KEY

STORED_OPENAI_KEY = "sk-or-v1-openai-stored-key-0123456789STOR"
PROVIDERS = {"anthropic": DEFAULT_MODEL, "openai_compatible": "llama3.2:3b"}
# what each provider's key check accepts, so a listener can take a key before it redirects
CHECK_ANSWERS = {
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                  "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                  "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
    "openai_compatible": {"object": "list", "data": [{"id": "m", "object": "model"}]}}


def call(server, method: str, path: str, body=None) -> tuple[int, dict]:
    """(status, JSON body) of one request to the live server."""
    parts = urlsplit(server.url)
    with closing(http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)) as conn:
        conn.request(method, path, None if body is None else json.dumps(body),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")


def chat(server) -> list[tuple[str, dict]]:
    """A chat turn in a new session over SSE: its events."""
    session = call(server, "POST", "/api/sessions", {"persona_id": "default"})[1]
    with SseStream(server.url, "/api/chat/stream", {"session_id": session["id"],
                                                    "message": "Hello"}) as stream:
        return stream.events()


@pytest.mark.parametrize("source", ["environment", "settings"])
@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_no_key_reaches_a_url_named_in_the_connection_test_or_the_settings(
        server, claude, openai_fake, listener, snapshot, provider, source):
    key = {"anthropic": ENV_KEY, "openai_compatible": OPENAI_KEY}[provider]
    switch = {"provider": provider, "model": PROVIDERS[provider]}
    assert call(server, "PUT", "/api/settings", switch)[0] == 200
    if source == "settings":
        key = {"anthropic": STORED_KEY, "openai_compatible": STORED_OPENAI_KEY}[provider]
        claude.enqueue(replies.text("ok"))
        stored = call(server, "PUT", "/api/settings/api-key", {"api_key": key,
                                                               "provider": provider})
        assert stored[0] == 200, stored
    before = snapshot()
    probe = call(server, "POST", "/api/settings/test-connection",
                 {"provider": provider, "base_url": listener.url + "/v1"})
    put = call(server, "PUT", "/api/settings", {"base_url": listener.url + "/v1"})
    assert (probe[0], put[0]) == (409, 409), (probe, put)
    assert probe[1]["error"]["code"] == put[1]["error"]["code"] == "key_bound_to_url"
    assert snapshot() == before
    claude.default = replies.text("Still home.")
    openai_fake.default = openai_replies.text("Still home.")
    assert chat(server)[-1][0] == "done"
    own = claude if provider == "anthropic" else openai_fake
    assert key in json.dumps(dict(own.requests[-1].headers))
    assert listener.seen == []


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_chat_with_its_own_key_follows_no_redirect(server, listener, provider):
    """The listener's own key (given with its URL) goes to the listener; the listener's 302
    to another port takes neither the request nor the key anywhere."""
    listener.answer = Answer(body=CHECK_ANSWERS[provider])
    saved = call(server, "PUT", "/api/settings", {
        "provider": provider, "model": PROVIDERS[provider], "base_url": listener.url + "/v1",
        "api_key": OTHER_KEY})
    assert saved[0] == 200, saved
    with Listener() as target:
        listener.answer = Answer(kind="redirect", status=307,
                                 location=target.url + "/v1/chat/completions")
        events = chat(server)
        assert events[-1][0] == "error", events
        assert target.seen == []
    assert listener.reached_with(OTHER_KEY) and listener.reached_with(ENV_KEY) == []


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:99999/v1", "http://127.0.0.1:0/v1", "http://127.0.0.1:port/v1",
    "http://bad host/v1", "http://0177.0.0.1:8001/v1", "http://300.1.1.1/v1",
    "http://1.2.3.04/v1", "http://a..b/v1", "http://" + "a" * 64 + ".example/v1",
    "http://" + ".".join(["a" * 60] * 5) + "/v1"],
    ids=["port-99999", "port-0", "port-name", "space", "octal", "over-255", "leading-zero",
         "empty-label", "long-label", "long-name"])
def test_an_invalid_base_url_is_refused(server, url, snapshot):
    """Refused before it is stored or probed: a host no HTTP client can reach (an address
    httpx refuses, a name the IDNA codec refuses) answered 500 or `api_error` later."""
    before = snapshot()
    for provider in PROVIDERS:
        put = call(server, "PUT", "/api/settings", {"provider": provider, "base_url": url,
                                                    "api_key": None})
        probe = call(server, "POST", "/api/settings/test-connection", {
            "provider": provider, "base_url": url, "api_key": None})
        for status, body in (put, probe):
            assert status == 400, body
            assert body["error"]["field"] == "base_url"
    assert snapshot() == before
