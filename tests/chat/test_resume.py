"""Replies outlive their connection: resume over WebSocket and SSE, explicit stop, failures kept."""
import threading

import pytest

from tests.chat.chat_support import ChatSocketClient, SseStream, eventually, live_config
from tests.fakes.claude import replies

WORDS = [f"w{i} " for i in range(12)]


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _long_reply(script, gate):
    script.reply(replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))


def test_a_new_socket_resumes_the_reply_without_duplicates(server, script, make_session, rows):
    sid = make_session()["id"]
    gate = threading.Event()
    _long_reply(script, gate)
    with ChatSocketClient(server.ws_url) as first:
        first.send(type="chat", session_id=sid, message="Tell me")
        start = first.next()
        assert first.next() == {"type": "chunk", "text": "w0 "}
    with ChatSocketClient(server.ws_url) as second:
        second.send(type="resume", session_id=sid)
        resumed = second.next()
        assert resumed == {**start, "type": "start"}
        assert second.next() == {"type": "chunk", "text": "w0 "}
        gate.set()
        rest = second.until("done", "error")
    text = "w0 " + "".join(e["text"] for e in rest if e["type"] == "chunk")
    assert text == "".join(WORDS) == rest[-1]["text"]
    assert rest[-1]["message_id"] == start["reply_id"]
    assert rows("SELECT content, status, streaming FROM messages WHERE role = 'assistant'") == [
        {"content": "".join(WORDS), "status": "complete", "streaming": 0}]


def test_resume_with_nothing_in_flight_is_idle(server, make_session):
    sid = make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="resume", session_id=sid)
        assert ws.next() == {"type": "idle", "session_id": sid}
        ws.send(type="resume", session_id="nosuchsession000")
        assert ws.next()["code"] == "session_not_found"
    with SseStream(server.url, f"/api/sessions/{sid}/stream", None, method="GET") as stream:
        assert stream.status == 204


def test_sse_resumes_after_last_event_id_with_exactly_the_rest(server, script, make_session):
    sid = make_session()["id"]
    gate = threading.Event()
    _long_reply(script, gate)
    first = SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "Go"})
    kind, start = first.next_event()
    assert kind == "start" and first.last_id == f"{start['reply_id']}:0"
    assert first.next_event() == ("chunk", {"text": "w0 "})
    seen = first.last_id
    assert seen == f"{start['reply_id']}:3"
    first.close()
    with SseStream(server.url, f"/api/sessions/{sid}/stream", None, method="GET") as fresh:
        assert fresh.next_event() == ("start", start)
        assert fresh.next_event() == ("chunk", {"text": "w0 "})
    gate.set()
    with SseStream(server.url, f"/api/sessions/{sid}/stream", None, method="GET",
                   headers={"Last-Event-ID": seen}) as again:
        events = again.events()
    assert events[0][0] == "chunk" and events[-1][0] == "done"
    assert "w0 " + "".join(d["text"] for k, d in events if k == "chunk") == "".join(WORDS)
    assert again.last_id == f"{start['reply_id']}:{len(''.join(WORDS))}"


def test_stop_is_explicit_and_works_from_another_connection(server, claude, script,
                                                            make_session, rows):
    sid = make_session()["id"]
    gate = threading.Event()
    _long_reply(script, gate)
    with ChatSocketClient(server.ws_url) as first, ChatSocketClient(server.ws_url) as second:
        first.send(type="chat", session_id=sid, message="Go")
        assert first.until("chunk")[-1]["text"] == "w0 "
        second.send(type="stop", session_id=sid)
        assert claude.wait_for_disconnect(timeout=10)
        done = first.until("done", "error")[-1]
        gate.set()
    assert (done["type"], done["stop_reason"], done["text"]) == ("done", "cancelled", "w0 ")
    assert rows("SELECT content, status, streaming FROM messages WHERE role = 'assistant'") == [
        {"content": "w0 ", "status": "incomplete", "streaming": 0}]


def test_a_failed_reply_is_shown_with_its_error_after_a_reload(server, client, script,
                                                               make_session):
    sid = make_session()["id"]
    script.reply(replies.overloaded())
    with ChatSocketClient(server.ws_url) as ws:
        assert ws.chat(sid, "Hello?")[-1]["code"] == "overloaded"
    messages = client.get(f"/api/sessions/{sid}").get_json()["messages"]
    assert [(m["role"], m["status"]) for m in messages] == [("user", "complete"),
                                                            ("assistant", "incomplete")]
    assert messages[1]["error"]["code"] == "overloaded"
    assert messages[1]["error"]["retryable"] is True
    script.reply("Here I am.")
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="regenerate", message_id=messages[1]["id"])
        assert ws.until("done", "error")[-1]["text"] == "Here I am."
    after = client.get(f"/api/sessions/{sid}").get_json()["messages"]
    assert [(m["content"], m["error"], len(m["siblings"])) for m in after] == [
        ("Hello?", None, 1), ("Here I am.", None, 1)]


def test_the_session_shows_the_streaming_reply_with_its_text_so_far(server, client, script,
                                                                    make_session):
    sid = make_session()["id"]
    gate = threading.Event()
    _long_reply(script, gate)
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=sid, message="Go")
        ws.until("chunk")
        reply = eventually(lambda: [m for m in client.get(f"/api/sessions/{sid}").get_json()[
            "messages"] if m["role"] == "assistant" and m["content"]])[0]
        assert reply["status"] == "streaming" and reply["content"].startswith("w0 "), reply
        busy = client.patch(f"/api/messages/{reply['id']}", json={"content": "mine"})
        assert busy.status_code == 409 and busy.get_json()["error"]["code"] == "session_busy"
        gate.set()
        assert ws.until("done")[-1]["text"] == "".join(WORDS)
