"""Replies across worker processes: resume and stop from another process, SIGKILL mid-reply,
and two clients racing tree changes on one session.

Two servers (`python -m src.app`, one worker each) share one data directory, as two gunicorn
workers do; a client attached to the process that does not generate the reply must see it all.
"""
import os
import signal
import sqlite3
import threading
from contextlib import closing

import pytest

from tests.chat.chat_support import ChatSocketClient, SseStream, eventually
from tests.fakes.claude import replies
from tests.robustness.servers import ServerProcess, serving
from tests.support.concurrency import run_all

WORDS = [f"w{i} " for i in range(20)]
FULL = "".join(WORDS)


@pytest.fixture
def pair(data_dir, tmp_path, server_env):
    with serving(ServerProcess(data_dir, tmp_path / "a.log", **server_env),
                 ServerProcess(data_dir, tmp_path / "b.log", **server_env)) as both:
        yield both


def _session(server) -> str:
    status, _, body = server.call("POST", "/api/sessions", {"persona_id": "default"})
    assert status == 201
    return body["id"]


def _messages(server, sid) -> list[dict]:
    status, _, body = server.call("GET", f"/api/sessions/{sid}")
    assert status == 200
    return body["messages"]


def _gated(claude, gate):
    claude.default = replies.gated(replies.text(FULL, chunks=WORDS), gate)


def test_a_client_on_the_other_process_resumes_and_can_stop(pair, claude):
    first, second = pair
    sid = _session(first)
    gate = threading.Event()
    _gated(claude, gate)
    with ChatSocketClient(first.ws_url) as origin:
        origin.send(type="chat", session_id=sid, message="Tell me")
        start = origin.next()
        assert origin.next()["text"] == "w0 "
        eventually(lambda: _messages(second, sid)[-1]["content"] == "w0 ")
        with ChatSocketClient(second.ws_url) as other:
            other.send(type="resume", session_id=sid)
            assert other.next() == start
            assert other.next() == {"type": "chunk", "text": "w0 "}
            with SseStream(second.url, f"/api/sessions/{sid}/stream", None, method="GET",
                           headers={"Last-Event-ID": f"{start['reply_id']}:3"}) as sse:
                gate.set()
                rest = other.until("done", "error")
                tail = sse.events()
        assert origin.until("done", "error")[-1]["text"] == FULL
    assert "w0 " + "".join(e["text"] for e in rest if e["type"] == "chunk") == FULL
    assert rest[-1]["type"] == "done" and rest[-1]["message_id"] == start["reply_id"]
    assert "w0 " + "".join(d["text"] for k, d in tail if k == "chunk") == FULL
    assert tail[-1][0] == "done"

    stopper = threading.Event()
    _gated(claude, stopper)
    with ChatSocketClient(first.ws_url) as origin:
        origin.send(type="chat", session_id=sid, message="Again")
        origin.until("chunk")
        status, _, body = second.call("POST", f"/api/sessions/{sid}/stop", {})
        assert (status, body["stopped"]) == (200, True)
        done = origin.until("done", "error")[-1]
        stopper.set()
    assert (done["type"], done["stop_reason"], done["text"]) == ("done", "cancelled", "w0 ")


def _kill_tree(proc) -> None:
    """SIGKILL the gunicorn master and its workers (no clean-up code runs anywhere)."""
    children = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == proc.pid:
                        children.append(int(pid))
            except (OSError, ValueError, IndexError):
                continue
    for pid in [*children, proc.pid]:
        os.kill(pid, signal.SIGKILL)
    proc.wait()


def test_sigkill_mid_reply_keeps_the_partial_text_and_frees_the_session(data_dir, tmp_path,
                                                                      server_env, claude):
    gate = threading.Event()
    with serving(ServerProcess(data_dir, tmp_path / "b.log", **server_env),
                 ServerProcess(data_dir, tmp_path / "a.log", **server_env)) as (survivor, victim):
        sid = _session(victim)
        _gated(claude, gate)
        with ChatSocketClient(victim.ws_url) as ws:
            ws.send(type="chat", session_id=sid, message="Tell me")
            ws.until("chunk")
            eventually(lambda: _messages(survivor, sid)[-1]["content"] == "w0 ")
            _kill_tree(victim.proc)
        gate.set()
        reply = eventually(lambda: [m for m in _messages(survivor, sid)
                                    if m["status"] != "streaming"])[-1]
    assert (reply["role"], reply["content"], reply["status"], reply["stop_reason"]) == (
        "assistant", "w0 ", "incomplete", "interrupted")
    with ServerProcess(data_dir, tmp_path / "c.log", **server_env) as restarted:
        claude.default = replies.text("Continued fine.")
        with ChatSocketClient(restarted.ws_url) as ws:
            assert ws.chat(sid, "Still there?")[-1]["text"] == "Continued fine."


def test_an_orphan_found_at_start_up_is_marked_incomplete(data_dir, tmp_path, server_env, claude):
    gate = threading.Event()
    with ServerProcess(data_dir, tmp_path / "a.log", **server_env) as victim:
        sid = _session(victim)
        _gated(claude, gate)
        with ChatSocketClient(victim.ws_url) as ws:
            ws.send(type="chat", session_id=sid, message="Tell me")
            ws.until("chunk")
            _kill_tree(victim.proc)
    gate.set()
    with ServerProcess(data_dir, tmp_path / "b.log", **server_env), \
            closing(sqlite3.connect(data_dir / "app.db")) as conn:
        rows = conn.execute("SELECT role, streaming, status, error FROM messages "
                            "ORDER BY id").fetchall()
    assert [r[:3] for r in rows] == [("user", 0, "complete"), ("assistant", 0, "incomplete")]
    assert rows[1][3] is None or '"interrupted"' in rows[1][3]


def test_two_clients_racing_tree_changes_leave_one_consistent_tree(pair, claude):
    first, second = pair
    sid = _session(first)
    claude.default = replies.text("An answer.", chunks=["An ", "answer."])
    with ChatSocketClient(first.ws_url) as ws:
        assert ws.chat(sid, "Hello")[-1]["type"] == "done"
    user, reply = _messages(first, sid)
    outcomes = []

    def regenerate(server):
        for _ in range(4):
            with ChatSocketClient(server.ws_url) as ws:
                ws.send(type="regenerate", message_id=reply["id"])
                outcomes.append(ws.until("done", "error")[-1].get("code", "done"))

    def edit(server):
        for n in range(4):
            status, _, body = server.call("PATCH", f"/api/messages/{user['id']}",
                                          {"content": f"Hello {n}"})
            outcomes.append(status if status != 200 else "edited")
            assert status in (200, 409), body

    run_all([(regenerate, first), (regenerate, second), (edit, first), (edit, second)])
    assert set(outcomes) <= {"done", "session_busy", "edited", 409, "message_not_found"}
    with closing(sqlite3.connect(data_dir_of(first) / "app.db")) as conn:
        _assert_consistent(conn, sid)


def data_dir_of(server):
    from pathlib import Path
    return Path(server.env["PERSONA_DATA_DIR"])


def _assert_consistent(conn, sid: str) -> None:
    """No reply left streaming; the on-branch flags are exactly the path to the active leaf."""
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE streaming = 1").fetchone()[0] == 0
    leaf = conn.execute("SELECT active_leaf_id FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    parents = dict(conn.execute("SELECT id, parent_id FROM messages WHERE session_id = ?",
                                (sid,)).fetchall())
    path, node = set(), leaf
    while node is not None:
        path.add(node)
        node = parents[node]
    flagged = {row[0] for row in conn.execute(
        "SELECT id FROM messages WHERE session_id = ? AND on_branch = 1", (sid,))}
    assert flagged == path
    assert all(p is None or p in parents for p in parents.values())
