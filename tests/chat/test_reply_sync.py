"""When a reply's row gets its growing text (generations.py): every sync for a reply something
outside the generating process follows (a page showing it, a follower tailing the row), and only
at the checkpoint for the others, so a turn nobody else watches writes its row twice, not four
times a second. The checkpoint here is an hour, so any mid-stream write comes from a mark.
While its process runs no reply the sync thread sleeps, and a ring wakes it."""
import sqlite3
import threading
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.process_bells import ProcessBells
from tests.chat.chat_support import ChatSocketClient, eventually, live_config
from tests.fakes.claude import replies

WORDS = [f"w{i} " for i in range(6)]


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, REPLY_CHECKPOINT_SECONDS=3600.0)


def _reply(rows, sid: str) -> dict:
    return rows("SELECT content, streaming, stop_reason FROM messages WHERE session_id = ? AND "
                "role = 'assistant'", sid)[0]


def test_only_the_reply_a_page_shows_gets_its_text_written_while_streaming(
        server, client, script, make_session, rows):
    gates = [threading.Event(), threading.Event()]
    script.reply(*(replies.gated(replies.text("".join(WORDS), chunks=WORDS), g) for g in gates))
    watched, unwatched = make_session()["id"], make_session()["id"]
    with ChatSocketClient(server.ws_url) as one, ChatSocketClient(server.ws_url) as two:
        one.send(type="chat", session_id=unwatched, message="Go")
        assert one.until("chunk")[-1]["text"] == "w0 "
        two.send(type="chat", session_id=watched, message="Go")
        assert two.until("chunk")[-1]["text"] == "w0 "
        client.get(f"/api/sessions/{watched}")  # a page shows it: its process keeps it current
        eventually(lambda: _reply(rows, watched)["content"] == "w0 ")
        # the same sync pass saw the other reply, with text since before the mark
        assert _reply(rows, unwatched) == {"content": "", "streaming": 1, "stop_reason": None}
        shown = client.get(f"/api/sessions/{watched}").get_json()["messages"][-1]
        assert (shown["status"], shown["stop_reason"], shown["content"]) == (
            "streaming", None, "w0 ")  # the mark between processes is not an end
        for gate in gates:
            gate.set()
        assert one.until("done")[-1]["text"] == two.until("done")[-1]["text"] == "".join(WORDS)
    for sid in (watched, unwatched):
        assert _reply(rows, sid) == {"content": "".join(WORDS), "streaming": 0,
                                     "stop_reason": "end_turn"}


def _idle_after_a_reply(app, server, sid: str) -> None:
    """One whole reply, then nothing running in the app's process (its sync thread waits for
    its next look, an hour away here, or for a reply to start)."""
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=sid, message="Hi")
        ws.until("done")
    hub = provider.services_of(app).chat.hub
    eventually(lambda: not hub.busy())


def test_a_page_elsewhere_gets_the_text_of_a_reply_started_after_an_idle_spell(
        app, server, client, script, make_session, rows):
    """After an idle spell the sync thread waits (for its next look or a reply's start); the
    ring of a mark left from another process (a page showing the reply) wakes it, so the mark
    is seen, not slept through."""
    gate = threading.Event()
    script.reply(replies.text("".join(WORDS), chunks=WORDS),
                 replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    sid = make_session()["id"]
    _idle_after_a_reply(app, server, sid)
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=sid, message="Go on")
        assert ws.until("chunk")[-1]["text"] == "w0 "
        client.get(f"/api/sessions/{sid}")  # the mark another worker's page leaves
        eventually(lambda: _last_reply(rows, sid)["content"] == "w0 ")
        gate.set()
        assert ws.until("done")[-1]["text"] == "".join(WORDS)


def test_a_stop_from_elsewhere_ends_a_reply_started_after_an_idle_spell(
        app, server, script, make_session, rows, data_dir):
    """A stop requested by another process is a mark on the row and a ring of the generating
    processes' bells (`process_bells.py`), heard by the sync thread that the reply's start woke
    (the checkpoint is an hour: without the ring nothing would look)."""
    gate = threading.Event()
    script.reply(replies.text("".join(WORDS), chunks=WORDS),
                 replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    sid = make_session()["id"]
    _idle_after_a_reply(app, server, sid)
    try:
        with ChatSocketClient(server.ws_url) as ws:
            ws.send(type="chat", session_id=sid, message="Go on")
            reply_id = ws.until("start")[-1]["reply_id"]
            with closing(sqlite3.connect(data_dir / "app.db")) as other:  # another process's
                other.execute("UPDATE messages SET stop_reason = 'stop_requested' "
                              "WHERE id = ?", (reply_id,))
                other.commit()
            ProcessBells(str(data_dir / "locks"), "replies").ring()  # as that process's stop rings
            assert ws.until("done")[-1]["stop_reason"] == "cancelled"
    finally:
        gate.set()


def _last_reply(rows, sid: str) -> dict:
    return rows("SELECT content, streaming, stop_reason FROM messages WHERE session_id = ? AND "
                "role = 'assistant' ORDER BY id DESC LIMIT 1", sid)[0]
