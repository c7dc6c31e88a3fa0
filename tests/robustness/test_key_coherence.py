"""One API key for every worker process: a key set, replaced or deleted through one process is
the key the other process sends (or does not send) with its very next request; the same holds for the
other settings (user name, max tokens), which no process keeps in memory.

Two servers (`python -m src.app`, one worker each, so each request's process is known) share
one data directory and one Claude fake, which records the key of every request it receives.
"""
import pytest

from tests.chat.chat_support import SseStream
from tests.fakes.claude import replies
from tests.robustness.servers import ServerProcess, serving

FIRST_KEY = "sk-ant-api03-first-0123456789abcdefghijAAAA"
SECOND_KEY = "sk-ant-api03-second-9876543210zyxwvutsrqBBBB"


@pytest.fixture
def upstream(claude):
    claude.default = replies.scripted(lambda body: replies.text("Hello there."))
    return claude


@pytest.fixture
def servers(data_dir, tmp_path, upstream, key_hygiene):
    key_hygiene.add_secret(FIRST_KEY)
    key_hygiene.add_secret(SECOND_KEY)
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": upstream.url, "PERSONA_WORKERS": "1"}
    with serving(ServerProcess(data_dir, tmp_path / "a.log", **env),
                 ServerProcess(data_dir, tmp_path / "b.log", **env)) as (first, second):
        yield first, second
    key_hygiene.add_data_dir(data_dir)


def _keys(claude) -> list:
    return [r.headers.get("authorization", "")[len("Bearer "):] for r in claude.requests]


def _chat(server, claude, expected_requests: int | None):
    """One turn in a new session; waits until the fake saw the reply and title requests."""
    session = server.call("POST", "/api/sessions", {"persona_id": "default"})[2]["id"]
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session, "message": "Hi"}) as stream:
        events = stream.events() if stream.status == 200 else [("error", stream.json()["error"])]
    if expected_requests is not None:
        claude.wait_for_requests(expected_requests, timeout=20)
    return events[-1]


def test_a_key_change_in_one_process_counts_in_the_other_before_its_next_request(servers,
                                                                                   upstream):
    first, second = servers
    assert first.call("PUT", "/api/settings/api-key", {"api_key": FIRST_KEY})[0] == 200
    assert second.call("GET", "/api/settings")[2]["api_key"]["configured"] is True
    # the other settings live in SQLite too: one process's PUT is the other's next request
    assert first.call("PUT", "/api/settings", {"user_name": "Robin", "max_tokens": 777})[0] == 200
    kind, _ = _chat(second, upstream, 3)  # key check, reply, title
    assert kind == "done"
    assert _keys(upstream) == [FIRST_KEY] * 3
    reply = upstream.requests[1]
    assert reply.body["max_tokens"] == 777 and "Robin" in str(reply.system)

    assert second.call("PUT", "/api/settings/api-key", {"api_key": SECOND_KEY})[0] == 200
    kind, _ = _chat(first, upstream, 6)
    assert kind == "done"
    assert _keys(upstream)[3:] == [SECOND_KEY] * 3

    assert first.call("DELETE", "/api/settings/api-key")[0] == 200
    for server in (second, first):
        assert server.call("GET", "/api/settings")[2]["api_key"]["configured"] is False
        kind, data = _chat(server, upstream, None)
        assert (kind, data["code"]) == ("error", "not_configured")
    assert len(upstream.requests) == 6, "a deleted key was sent upstream"
