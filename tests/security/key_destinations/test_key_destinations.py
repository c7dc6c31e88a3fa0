"""Where a key may go (issue 21, DESIGN §15 "Keys"): a stored or environment key is sent only to
the base URL it belongs to. Real HTTP throughout: the app's SDK clients against the fakes and
a loopback listener that records everything that reaches it."""
import http.client
import json
import threading
import time
from contextlib import ExitStack
from urllib.parse import urlsplit

import pytest

from tests.fakes.claude import FakeClaude, replies
from tests.fakes.openai_compat import replies as openai_replies
from tests.support.listener import Answer, Listener

from .keys import ENV_KEY, OPENAI_KEY, OTHER_KEY, STORED_KEY


def chat(client) -> list[tuple[str, dict]]:
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()
    body = client.post("/api/chat/stream", json={"session_id": session["id"],
                                                 "message": "Hello"}).get_data(as_text=True)
    events, kind = [], None
    for line in body.splitlines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: ") and kind:
            events.append((kind, json.loads(line[6:])))
    return events


def store_key(client, claude, key=STORED_KEY):
    claude.enqueue(replies.text("ok"))
    response = client.put("/api/settings/api-key", json={"api_key": key})
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("stored", [False, True], ids=["env-key", "stored-key"])
def test_test_connection_never_sends_the_key_to_a_url_it_was_not_saved_for(
        client, claude, listener, stored):
    if stored:
        store_key(client, claude)
    response = client.post("/api/settings/test-connection",
                           json={"provider": "anthropic", "base_url": listener.url})
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "key_bound_to_url"
    assert listener.reached_with(ENV_KEY) == [] and listener.reached_with(STORED_KEY) == []


def test_a_new_base_url_without_its_key_is_refused_and_chats_keep_their_endpoint(
        client, claude, listener, snapshot):
    before = snapshot()
    response = client.put("/api/settings", json={"base_url": listener.url})
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "key_bound_to_url"
    assert snapshot() == before
    claude.default = replies.text("Still here.")
    assert chat(client)[-1][0] == "done"
    assert listener.seen == [] and ENV_KEY in json.dumps(dict(claude.requests[-1].headers))


def test_a_base_url_accepted_without_a_key_gets_no_key(client, claude, listener):
    listener.answer = Answer(status=500, body={"error": {"message": "nothing here"}})
    response = client.put("/api/settings", json={"base_url": listener.url, "api_key": None})
    assert response.status_code == 200
    assert response.get_json()["api_key"]["configured"] is False
    chat(client)
    assert listener.reached_with(ENV_KEY) == []
    back = client.put("/api/settings", json={"base_url": None})  # the key's own URL again
    assert back.status_code == 200 and back.get_json()["api_key"]["configured"] is True


def test_a_key_given_with_its_new_url_is_checked_there_and_belongs_there(client, claude,
                                                                       data_dir):
    with FakeClaude(api_key=OTHER_KEY) as other:
        other.default = replies.text("From the other one.")
        response = client.put("/api/settings", json={"base_url": other.url,
                                                     "api_key": OTHER_KEY})
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["api_key"]["last4"] == "OTHR"
        assert chat(client)[-1][0] == "done"
        assert all(OTHER_KEY in json.dumps(dict(r.headers)) for r in other.requests)
    stored = json.loads((data_dir / "secrets.json").read_text())
    assert stored["anthropic_base_url"] == other.url
    claude.default = replies.text("Home again.")
    assert client.put("/api/settings", json={"base_url": claude.url}).status_code == 200
    assert chat(client)[-1][0] == "done"
    assert not any(OTHER_KEY in json.dumps(dict(r.headers)) for r in claude.requests)


def test_the_openai_key_stays_with_its_url_too(client, openai_fake, listener):
    for body in ({"provider": "openai_compatible", "base_url": listener.url,
                  "model": "llama3.2:3b"},):
        put = client.put("/api/settings", json=body)
        probe = client.post("/api/settings/test-connection", json={
            "provider": "openai_compatible", "base_url": listener.url})
        assert (put.status_code, probe.status_code) == (409, 409)
    assert listener.reached_with(OPENAI_KEY) == []
    switched = client.put("/api/settings", json={"provider": "openai_compatible",
                                                 "model": "llama3.2:3b"})
    assert switched.status_code == 200 and switched.get_json()["api_key"]["last4"] == "OPEN"


def test_a_key_stored_before_keys_had_urls_stays_with_the_url_of_that_time(
        app_config, data_dir, claude, listener):
    from src.app import create_app
    from src.utils import provider

    (data_dir / "secrets.json").write_text(json.dumps({"anthropic_api_key": STORED_KEY}))
    app = create_app(app_config)
    try:
        client = app.test_client()
        assert json.loads((data_dir / "secrets.json").read_text())["anthropic_base_url"] == \
            claude.url
        response = client.put("/api/settings", json={"base_url": listener.url})
        assert response.status_code == 409
    finally:
        provider.shutdown_services(app)
    assert listener.seen == []


@pytest.mark.parametrize("provider", ["anthropic", "openai_compatible"])
def test_probes_and_chats_follow_no_redirect(client, provider, listener):
    with Listener() as target:
        target.answer = Answer(body={"object": "list", "data": [{"id": "far-away-model",
                                                                   "object": "model"}]})
        listener.answer = Answer(kind="redirect", status=302, location=target.url + "/v1/models")
        report = client.post("/api/settings/test-connection", json={
            "provider": provider, "base_url": listener.url + "/v1", "api_key": OTHER_KEY})
        assert report.status_code == 200
        data = report.get_json()
        assert data["models"] == [] and data["reachable"] is False
        assert str(target.port) not in report.get_data(as_text=True)
        client.put("/api/settings", json={"provider": provider, "base_url": listener.url
                                          + "/v1", "model": "some-model", "api_key": None})
        chat(client)
        assert target.seen == []
    assert listener.seen and listener.reached_with(ENV_KEY) == []


@pytest.mark.parametrize("answer", [
    Answer(status=400, body={"error": {"message": "ECHO-ME-please"},
                             "data": [{"id": "leaked-model"}]}),
    Answer(status=200, content_type="text/plain",
           body={"data": [{"id": "leaked-model"}], "note": "ECHO-ME-please"}),
    Answer(status=200, body={"data": [{"id": "leaked-model", "x": "ECHO-ME-please"},
                                      {"name": "not a model"}]}),
], ids=["error-json", "text-plain-list", "not-a-list"])
@pytest.mark.parametrize("provider", ["anthropic", "openai_compatible"])
def test_the_probe_repeats_nothing_it_reached(client, listener, answer, provider):
    listener.answer = answer
    response = client.post("/api/settings/test-connection", json={
        "provider": provider, "base_url": listener.url + "/v1", "api_key": OTHER_KEY})
    text = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "ECHO-ME" not in text and "leaked-model" not in text
    report = response.get_json()
    assert report["reachable"] is False and report["models"] == []
    assert set(report["error"]) == {"code", "message"}


@pytest.mark.parametrize("provider", ["anthropic", "openai_compatible"])
def test_an_open_port_that_is_not_an_api_is_not_reachable(client, listener, provider):
    listener.answer = Answer(status=404, content_type="text/html", body=b"<h1>hello</h1>")
    report = client.post("/api/settings/test-connection", json={
        "provider": provider, "base_url": listener.url, "api_key": OTHER_KEY}).get_json()
    assert report["reachable"] is False


def test_a_probe_ends_with_timeout_however_the_far_side_stalls(server):
    """A port that never answers, or answers one byte at a time for ever, cannot hold the
    request (it held it 60 s): the probe's 9 s budget cuts it. The bound here, 30 s, is
    generous on purpose; it still tells the budget from the SDK's own timeouts. The four
    cases (each provider, silent or trickling) wait at once, each on its own far side."""
    cases = [(provider, kind) for provider in ("anthropic", "openai_compatible")
             for kind in ("silent", "trickle")]
    with ExitStack() as stack:
        listeners = [stack.enter_context(Listener()) for _ in cases]
        results: list[dict] = [{} for _ in cases]
        threads = []
        for (provider, kind), listener, result in zip(cases, listeners, results, strict=True):
            listener.answer = Answer(kind=kind)
            threads.append(threading.Thread(target=_probe, args=(server, provider, listener,
                                                                   result)))
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, 30 - (time.monotonic() - began)))
        waiting = [case for case, thread in zip(cases, threads, strict=True) if thread.is_alive()]
        print(f"\nthe probes answered after {time.monotonic() - began:.2f} s; "
              f"still waiting: {waiting}")
        for listener in listeners:
            listener.close()  # frees a probe that is still stuck, so its thread ends
        for thread in threads:
            thread.join(10)
    assert waiting == [], "these probes were still waiting on the far side"
    assert [result["report"]["error"]["code"] for result in results] == ["timeout"] * 4


def _probe(server, provider: str, listener, result: dict) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(server.url).port, timeout=90)
    try:
        conn.request("POST", "/api/settings/test-connection", json.dumps({
            "provider": provider, "base_url": listener.url, "api_key": OTHER_KEY}),
            {"Content-Type": "application/json"})
        result["report"] = json.loads(conn.getresponse().read())
    finally:
        conn.close()


def test_the_openai_env_key_goes_to_its_own_url(client, openai_fake):
    openai_fake.api_key = OPENAI_KEY
    openai_fake.default = openai_replies.tool_use([("ping", {"word": "pong"})])
    report = client.post("/api/settings/test-connection", json={
        "provider": "openai_compatible", "model": "llama3.2:3b"}).get_json()
    assert report["reachable"] is True and "llama3.2:3b" in report["models"]
    assert report["tools"]["non_streaming"] is True


SPELLINGS = ["http://127.0.0.1:8001/v1/", "HTTP://127.0.0.1:8001/v1", "http://127.0.0.1:8001/v1//",
             "http://127.0.0.1:08001/v1", "http://127.0.0.1.:8001/v1", "http://2130706433:8001/v1",
             "http://0x7f000001:8001/v1", "http://0177.0.0.1:8001/v1", "http://127.1:8001/v1",
             "http://[::ffff:127.0.0.1]:8001/v1", "http://[::ffff:7f00:1]:8001/v1",
             "http://localhost:8001/v1", "http://127.0.0.1:8001\\@evil.example/v1",
             "http://127.0.0.1:8001/v1\t", "http://127.0.0.1:8001/V1", "http://127.0.0.1:8001/./v1",
             "http://127.0.0.1:8001/v1/..", "https://127.0.0.1:8001/v1", "http://127.0.0.1:80/v1",
             "http://127.0.0.1:8001:8001/v1", "http://127.0.0.1:８００１/v1"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_spelling_shares_the_key_s_url_only_when_it_reaches_the_same_place(spelling):
    """A key is bound to its URL's canonical form (provider_settings.endpoint). Each spelling
    of an address (decimal, octal and IPv6 hosts, case, slashes, ports) is refused, or reads
    as another URL, or reaches exactly where the key's URL does: the scheme, host and port the
    HTTP client itself will connect to."""
    import httpx2
    from pydantic_core import PydanticCustomError

    from src.utils.models.fields import check_base_url
    from src.utils.services.provider_settings import endpoint

    bound = "http://127.0.0.1:8001/v1"
    try:
        accepted = check_base_url(spelling)
    except PydanticCustomError:
        return
    if endpoint("anthropic", accepted) == endpoint("anthropic", bound):
        ours, theirs = httpx2.URL(accepted + "/messages"), httpx2.URL(bound + "/messages")
        assert (ours.scheme, ours.host, ours.port, ours.path) == \
            (theirs.scheme, theirs.host, theirs.port, theirs.path)
