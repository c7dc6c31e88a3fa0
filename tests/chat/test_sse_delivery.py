"""How a reply reaches its SSE responses in the generating process (services/reply_feed.py):
handed over by the reply's own thread, what piles up while a response writes sent as one chunk,
nothing lost or repeated whoever reads slowly, leaves or follows alongside."""
import threading

import pytest

from tests.chat.chat_support import SseStream, eventually, live_config
from tests.fakes.claude import replies

WORDS = [f"w{i} " for i in range(12)]


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _finished(rows) -> bool:
    return rows("SELECT streaming FROM messages WHERE role = 'assistant'") == [{"streaming": 0}]


def _text(events: list) -> str:
    return "".join(data["text"] for kind, data in events if kind == "chunk")


def test_a_reader_that_stalls_gets_the_reply_once_in_fewer_larger_chunks(server, script,
                                                                         make_session, rows):
    # 6.4 MB of UTF-8 (under the reply's 2 million characters): more than the kernel buffers
    # between the server and a client with a small window hold (at most 4 MiB sent), so the
    # response's writes block while the reply goes on and finishes.
    pieces = [f"{i:04d}" + "\U0001f600" * 3996 for i in range(400)]
    script.reply(replies.text("".join(pieces), chunks=pieces))
    sid = make_session()["id"]
    with SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "Go"},
                   receive_buffer=4096) as stream:
        eventually(lambda: _finished(rows))
        events = stream.events()
    assert events[0][0] == "start" and events[-1][0] == "done", events[-1]
    assert _text(events) == "".join(pieces) == events[-1][1]["text"]
    chunks = sum(kind == "chunk" for kind, _ in events)
    assert chunks < len(pieces)  # what piled up while a write blocked went out as one
    assert stream.last_id == f"{events[0][1]['reply_id']}:{len(''.join(pieces))}"


def test_a_client_that_leaves_mid_stream_leaves_the_reply_whole(server, script, make_session,
                                                                rows):
    sid = make_session()["id"]
    gate = threading.Event()
    script.reply(replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    with SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "Go"}) as gone:
        assert gone.next_event()[0] == "start"
        assert gone.next_event() == ("chunk", {"text": "w0 "})
    gate.set()
    eventually(lambda: _finished(rows))
    assert rows("SELECT content, status FROM messages WHERE role = 'assistant'") == [
        {"content": "".join(WORDS), "status": "complete"}]
    script.reply(replies.text("Next one.", chunks=["Next ", "one."]))
    with SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "And?"}) as s:
        events = s.events()
    assert _text(events) == "Next one." and events[-1][0] == "done"


def test_two_sse_followers_of_one_reply_each_get_it_exactly_once(server, script, make_session):
    sid = make_session()["id"]
    gate = threading.Event()
    script.reply(replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    with SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "Go"}) as first:
        _, start = first.next_event()
        assert first.next_event() == ("chunk", {"text": "w0 "})
        with SseStream(server.url, f"/api/sessions/{sid}/stream", None, method="GET") as second:
            assert second.next_event() == ("start", start)
            assert second.next_event() == ("chunk", {"text": "w0 "})
            gate.set()
            theirs = second.events()
            mine = first.events()
    for rest in (mine, theirs):
        assert "w0 " + _text(rest) == "".join(WORDS)
        assert rest[-1][0] == "done" and rest[-1][1]["message_id"] == start["reply_id"]
    assert first.last_id == second.last_id == f"{start['reply_id']}:{len(''.join(WORDS))}"
