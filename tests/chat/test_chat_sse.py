"""POST /api/chat/stream over a real HTTP connection, with the fake upstream behind the real SDK."""
import threading

import pytest

from tests.chat.chat_support import (
    API_KEY,
    BOTH_PROVIDERS,
    SseStream,
    chat_requests,
    eventually,
    live_config,
)
from tests.fakes.claude import replies


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@BOTH_PROVIDERS
def test_chunks_arrive_before_upstream_finishes(server, script, make_session, rows):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("Hello there, friend!",
                                            chunks=["Hello", " there,", " friend!"]), gate))
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session["id"], "message": "Hi Mira"}) as stream:
        assert stream.status == 200
        assert stream.content_type.startswith("text/event-stream")
        kind, start = stream.next_event()
        assert kind == "start" and start["session_id"] == session["id"]
        assert stream.next_event() == ("chunk", {"text": "Hello"})
        gate.set()
        rest = stream.events()
    # what arrived while the response was writing comes coalesced, never lost or repeated
    assert [kind for kind, _ in rest][-1] == "done" and {kind for kind, _ in rest[:-1]} == {"chunk"}
    assert "".join(data["text"] for _, data in rest[:-1]) == " there, friend!"
    done = rest[-1][1]
    assert done["text"] == "Hello there, friend!"
    assert done["stop_reason"] == "end_turn"
    assert done["usage"]["output_tokens"] > 0
    assert set(done["cortex"]) >= {"triggered", "job_id", "progress", "frequency"}
    stored = rows("SELECT id, role, content, status FROM messages WHERE session_id = ? "
                  "ORDER BY id", session["id"])
    assert stored == [
        {"id": start["message_id"], "role": "user", "content": "Hi Mira", "status": "complete"},
        {"id": done["message_id"], "role": "assistant", "content": "Hello there, friend!",
         "status": "complete"},
    ]


@pytest.mark.parametrize("body,status,code", [
    ({"session_id": "nosuchsession000", "message": "hi"}, 404, "session_not_found"),
    ({"session_id": "../../etc/passwd", "message": "hi"}, 404, "session_not_found"),
    ({"session_id": None, "message": "hi"}, 404, "session_not_found"),
    ({"session_id": "SESSION", "message": ""}, 400, "validation_error"),
    ({"session_id": "SESSION", "message": "   "}, 400, "validation_error"),
    ({"session_id": "SESSION", "message": 42}, 400, "validation_error"),
    ({"session_id": "SESSION", "message": "x" * 32_001}, 400, "validation_error"),
    ({"session_id": "SESSION", "message": "hi", "extra": 1}, 400, "unknown_field"),
])
def test_bad_requests_are_json_4xx_before_any_stream(server, claude, make_session, rows, body,
                                                     status, code):
    session = make_session()
    body = {k: (session["id"] if v == "SESSION" else v) for k, v in body.items()}
    with SseStream(server.url, "/api/chat/stream", body) as stream:
        assert stream.status == status
        assert stream.content_type == "application/json"
        assert stream.json()["error"]["code"] == code
    assert rows("SELECT * FROM messages") == []
    assert claude.requests == []


@pytest.mark.parametrize("raw,content_type,status", [
    (b"session_id=x&message=hi", "application/x-www-form-urlencoded", 415),
    (b"{not json", "application/json", 400),
    (b"[1, 2]", "application/json", 400),
])
def test_non_json_bodies_are_refused(server, raw, content_type, status, rows):
    with SseStream(server.url, "/api/chat/stream", None, raw=raw,
                   content_type=content_type) as stream:
        assert stream.status == status
        assert "error" in stream.json()
    assert rows("SELECT * FROM messages") == []


def test_message_at_the_limit_is_accepted(server, script, make_session, rows):
    session = make_session()
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session["id"], "message": "y" * 32_000}) as stream:
        assert stream.events()[-1][0] == "done"
    assert len(rows("SELECT content FROM messages WHERE role = 'user'")[0]["content"]) == 32_000


@BOTH_PROVIDERS
def test_client_disconnect_does_not_stop_the_reply(server, claude, script, make_session, rows):
    session = make_session()
    gate = threading.Event()
    words = [f"word{i} " for i in range(50)]
    script.reply(replies.gated(replies.text("".join(words), chunks=words), gate))
    stream = SseStream(server.url, "/api/chat/stream",
                       {"session_id": session["id"], "message": "Tell me a long story"})
    assert stream.next_event()[0] == "start"
    assert stream.next_event() == ("chunk", {"text": "word0 "})
    stream.close()
    gate.set()
    reply = eventually(lambda: rows("SELECT content, status FROM messages "
                                    "WHERE role = 'assistant' AND streaming = 0"))
    assert reply == [{"content": "".join(words), "status": "complete"}]
    assert rows("SELECT content FROM messages WHERE role = 'user'") == [
        {"content": "Tell me a long story"}]


def test_second_stream_on_a_busy_session_is_409(server, script, make_session):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("One moment."), gate))
    body = {"session_id": session["id"], "message": "first"}
    with SseStream(server.url, "/api/chat/stream", body) as first:
        assert first.next_event()[0] == "start"
        with SseStream(server.url, "/api/chat/stream", {**body, "message": "second"}) as second:
            assert second.status == 409
            assert second.json()["error"]["code"] == "session_busy"
        gate.set()
        assert first.events()[-1][0] == "done"


@BOTH_PROVIDERS
def test_history_goes_upstream_and_the_key_never_comes_back(server, claude, script,
                                                            make_session):
    session = make_session()
    script.reply("First answer.", "Second answer.")
    seen = []
    for message in ("one", "two"):
        with SseStream(server.url, "/api/chat/stream",
                       {"session_id": session["id"], "message": message}) as stream:
            seen.append(stream.response.read().decode())
    assert chat_requests(claude)[-1].messages == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "First answer."},
        {"role": "user", "content": "two"},
    ]
    assert all(API_KEY not in text and API_KEY[-12:] not in text for text in seen)
