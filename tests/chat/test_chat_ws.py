"""/ws/chat over a real WebSocket: streaming, stop, bad frames, titles, and no mixing."""
import json
import queue
import threading

import pytest
from simple_websocket import ConnectionClosed

from src.utils import provider
from src.utils.services.chat_socket import run_chat_socket
from tests.chat.chat_support import BOTH_PROVIDERS, ChatSocketClient, chat_requests, live_config
from tests.fakes.claude import replies


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@BOTH_PROVIDERS
def test_chunks_arrive_incrementally_and_messages_are_stored(server, script, make_session,
                                                             rows):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("Hi! How are you?", chunks=["Hi!", " How", " are",
                                                                       " you?"]), gate))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=session["id"], message="Hello")
        start = ws.next()
        assert start == {"type": "start", "session_id": session["id"],
                         "message_id": start["message_id"], "reply_id": start["message_id"] + 1}
        assert ws.next() == {"type": "chunk", "text": "Hi!"}
        gate.set()
        rest = ws.until("done")
    assert [e["text"] for e in rest[:-1]] == [" How", " are", " you?"]
    done = rest[-1]
    assert done["text"] == "Hi! How are you?" and done["stop_reason"] == "end_turn"
    assert rows("SELECT id, role, status FROM messages ORDER BY id") == [
        {"id": start["message_id"], "role": "user", "status": "complete"},
        {"id": done["message_id"], "role": "assistant", "status": "complete"},
    ]


@BOTH_PROVIDERS
def test_stop_closes_upstream_and_keeps_the_partial_reply(server, claude, script, make_session,
                                                          rows):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("A very long answer", chunks=["A very", " long",
                                                                          " answer"]), gate))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=session["id"], message="Go on")
        assert ws.next()["type"] == "start"
        assert ws.next()["text"] == "A very"
        ws.send(type="stop")
        assert claude.wait_for_disconnect()
        done = ws.until("done", "error")[-1]
        gate.set()
        assert done["type"] == "done" and done["stop_reason"] == "cancelled"
        assert done["text"] == "A very"
        assert rows("SELECT id, content, status FROM messages WHERE role = 'assistant'") == [
            {"id": done["message_id"], "content": "A very", "status": "incomplete"}]
        script.reply("Next answer.")
        assert ws.chat(session["id"], "And now?")[-1]["text"] == "Next answer."
    assert chat_requests(claude)[-1].messages[1] == {"role": "assistant", "content": "A very"}


@pytest.mark.parametrize("frame", [
    "not json", "[1, 2]", '{"type": "dance"}', '{"no": "type"}', b"\x00\x01binary",
    pytest.param("[" * 20_000 + "]" * 20_000, id="deeply-nested"),
    '{"type": "chat", "session_id": "SESSION", "message": ""}',
    '{"type": "chat", "session_id": "SESSION"}',
    '{"type": "subscribe", "persona_id": "../etc"}',
])
def test_bad_frames_get_invalid_request_and_the_socket_stays_open(server, script,
                                                                   make_session, rows, frame):
    session = make_session()
    with ChatSocketClient(server.ws_url) as ws:
        ws.send_raw(frame.replace("SESSION", session["id"]) if isinstance(frame, str) else frame)
        error = ws.next()
        assert error["type"] == "error" and error["code"] == "invalid_request"
        assert error["retryable"] is False
        assert ws.chat(session["id"], "still here?")[-1]["type"] == "done"
    assert rows("SELECT content FROM messages WHERE role = 'user'") == [
        {"content": "still here?"}]


def test_unknown_session_and_a_second_chat_while_busy(server, script, make_session):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("Wait for it."), gate))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id="nosuchsession000", message="hi")
        assert ws.next()["code"] == "session_not_found"
        ws.send(type="chat", session_id=session["id"], message="first")
        assert ws.next()["type"] == "start"
        ws.send(type="chat", session_id=session["id"], message="second")
        events = ws.until("error")
        assert events[-1]["code"] == "busy"
        gate.set()
        assert ws.until("done")[-1]["text"] == "Wait for it."


@BOTH_PROVIDERS
def test_title_is_generated_after_the_first_exchange(server, claude, script, make_session, rows):
    session = make_session()
    script.title = '"Tea and books"'
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(session["id"], "Do you like tea?")
        title = ws.first("title")
    assert title == {"type": "title", "session_id": session["id"], "title": "Tea and books"}
    assert rows("SELECT title FROM sessions") == [{"title": "Tea and books"}]
    request = next(r for r in claude.requests if r.body["max_tokens"] == 30)
    assert "Do you like tea?" in request.messages[0]["content"]
    assert not request.stream


def test_two_sockets_on_two_personas_never_mix(server, script, make_persona, make_session,
                                               rows):
    other = make_persona("Basil")
    sessions = {"default": make_session()["id"], other["id"]: make_session(other["id"])["id"]}
    gates = {"Mira": threading.Event(), "Basil": threading.Event()}

    def answer(body):
        name = "Basil" if "You are Basil" in body["system"][0]["text"] else "Mira"
        return replies.gated(replies.text(f"{name} speaking", chunks=[name, " speaking"]),
                             gates[name])
    script.default_chat = replies.scripted(answer)
    with ChatSocketClient(server.ws_url) as a, ChatSocketClient(server.ws_url) as b:
        a.send(type="chat", session_id=sessions["default"], message="hi A")
        b.send(type="chat", session_id=sessions[other["id"]], message="hi B")
        assert a.until("chunk")[-1]["text"] == "Mira"
        assert b.until("chunk")[-1]["text"] == "Basil"
        gates["Mira"].set()
        gates["Basil"].set()
        done_a, done_b = a.until("done")[-1], b.until("done")[-1]
    assert (done_a["text"], done_b["text"]) == ("Mira speaking", "Basil speaking")
    stored = rows("SELECT session_id, persona_id, content FROM messages WHERE role = 'assistant'")
    assert sorted((r["session_id"], r["persona_id"], r["content"]) for r in stored) == sorted([
        (sessions["default"], "default", "Mira speaking"),
        (sessions[other["id"]], other["id"], "Basil speaking")])


class _FakeSocket:
    """Frames in, events out, ConnectionClosed when the script runs dry."""

    def __init__(self, frames):
        self.frames = queue.Queue()
        for frame in frames:
            self.frames.put(frame)
        self.sent: list[dict] = []
        self.received = threading.Condition()

    def receive(self, timeout=None):
        frame = self.frames.get(timeout=10)
        if frame is None:
            raise ConnectionClosed()
        if callable(frame):
            frame = frame(self)
        return frame

    def send(self, data):
        with self.received:
            self.sent.append(json.loads(data))
            self.received.notify_all()

    def wait_for(self, kind):
        with self.received:
            assert self.received.wait_for(
                lambda: any(e["type"] == kind for e in self.sent), timeout=10)


def test_run_chat_socket_with_a_fake_socket(app, script, make_session):
    session = make_session()
    ws = _FakeSocket([
        json.dumps({"type": "subscribe", "persona_id": "default"}),
        json.dumps({"type": "chat", "session_id": session["id"], "message": "hi"}),
        lambda sock: sock.wait_for("done"),
        json.dumps({"type": "stop"}),
        None,
    ])
    run_chat_socket(ws, provider.get_chat_service(app))
    assert [e["type"] for e in ws.sent] == ["subscribed", "start", "chunk", "done"]
    assert ws.sent[-1]["text"] == "Default reply."


def test_a_socket_that_follows_another_session_gets_no_more_frames_of_its_reply(
        server, script, make_session, rows):
    """The reply a socket started sends its frames from its own thread; once the socket
    follows another session, the reply goes on without sending it anything more."""
    first, second = make_session()["id"], make_session()["id"]
    gate = threading.Event()
    script.reply(replies.gated(replies.text("One two three", chunks=["One", " two", " three"]),
                               gate))
    script.reply("Hello from the second session.")
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=first, message="Count")
        assert ws.next()["type"] == "start"
        assert ws.next() == {"type": "chunk", "text": "One"}
        ws.send(type="resume", session_id=second)
        assert ws.next() == {"type": "idle", "session_id": second}
        gate.set()
        with ChatSocketClient(server.ws_url) as watcher:  # waits for the first reply's end
            watcher.send(type="resume", session_id=first)
            assert watcher.until("done", "error", "idle")[-1]["type"] in ("done", "idle")
        events = ws.chat(second, "Hi")
    assert events[0]["type"] == "start" and events[0]["session_id"] == second
    assert "".join(e["text"] for e in events if e["type"] == "chunk") == \
        "Hello from the second session."  # nothing of the first reply in between
    assert events[-1]["type"] == "done"
    assert rows("SELECT content, status FROM messages WHERE role = 'assistant' ORDER BY id") == [
        {"content": "One two three", "status": "complete"},
        {"content": "Hello from the second session.", "status": "complete"}]
