"""The growing text of a reply across worker processes (generations.py): a follower in another
process marks the reply, and its process keeps the row current from then on; a reply nobody
follows is written at its checkpoint, so a crash keeps what the last one held.

Two servers (`python -m src.app`, one worker each) share one data directory, as two gunicorn
workers do. Rows are read straight from SQLite where a page read would mark the reply too.
"""
import sqlite3
import threading
from contextlib import closing

from tests.chat.chat_support import ChatSocketClient, SseStream, eventually
from tests.robustness.servers import ServerProcess, serving
from tests.robustness.test_resume_processes import (
    FULL,
    _gated,
    _kill_tree,
    _messages,
    _session,
)


def _content(data_dir, sid: str) -> str | None:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        row = conn.execute("SELECT content FROM messages WHERE session_id = ? AND "
                           "role = 'assistant'", (sid,)).fetchone()
    return row[0] if row else None


def test_a_follower_in_another_process_gets_the_text_while_the_reply_streams(
        data_dir, tmp_path, server_env, claude):
    hour = {**server_env, "PERSONA_REPLY_CHECKPOINT_SECONDS": "3600"}  # only the mark writes mid-reply
    gate = threading.Event()
    with serving(ServerProcess(data_dir, tmp_path / "a.log", **hour),
                 ServerProcess(data_dir, tmp_path / "b.log", **hour)) as (first, second):
        sid = _session(first)
        _gated(claude, gate)
        with ChatSocketClient(first.ws_url) as origin:
            origin.send(type="chat", session_id=sid, message="Tell me")
            start = origin.next()
            assert origin.next()["text"] == "w0 "
            assert _content(data_dir, sid) == ""
            with SseStream(second.url, f"/api/sessions/{sid}/stream", None,
                           method="GET") as other:
                assert other.next_event() == ("start", {k: v for k, v in start.items()
                                                        if k != "type"})
                assert other.next_event() == ("chunk", {"text": "w0 "})  # gate still closed
                gate.set()
                rest = other.events()
            assert origin.until("done", "error")[-1]["text"] == FULL
    assert "w0 " + "".join(d["text"] for k, d in rest if k == "chunk") == FULL
    assert rest[-1][0] == "done" and rest[-1][1]["message_id"] == start["reply_id"]


def test_sigkill_of_a_reply_nobody_follows_keeps_its_last_checkpoint(data_dir, tmp_path, server_env,
                                                                    claude):
    quick = {**server_env, "PERSONA_REPLY_CHECKPOINT_SECONDS": "0.3"}
    gate = threading.Event()
    with serving(ServerProcess(data_dir, tmp_path / "b.log", **quick),
                 ServerProcess(data_dir, tmp_path / "a.log", **quick)) as (survivor, victim):
        sid = _session(victim)
        _gated(claude, gate)
        with ChatSocketClient(victim.ws_url) as ws:
            ws.send(type="chat", session_id=sid, message="Tell me")
            ws.until("chunk")
            eventually(lambda: _content(data_dir, sid) == "w0 ")
            _kill_tree(victim.proc)
        gate.set()
        reply = eventually(lambda: [m for m in _messages(survivor, sid)
                                    if m["status"] != "streaming"])[-1]
    assert (reply["role"], reply["content"], reply["status"], reply["stop_reason"]) == (
        "assistant", "w0 ", "incomplete", "interrupted")
