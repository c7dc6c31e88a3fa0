"""Two servers on one data directory: chats and cortex edits through both at once.

Both run as in production (`python -m src.app`, gunicorn gthread; the first with
PERSONA_WORKERS=2, so three worker processes in all, each with its own cortex worker thread)
against one Claude fake. WebSocket and SSE clients chat through both; two people edit
the same cortex file through different processes with If-Match, retrying on 412, while cortex
updates queued through both processes rewrite it too. Afterwards the database is intact, every
message sent is stored once, and the file's revision chain is consistent: each revision is its
predecessor plus exactly one edit, so no edit was lost or applied to a stale text.
"""
import itertools
import sqlite3
import threading
import time
from contextlib import closing

import pytest

from src.utils.cortex.paths import CortexPaths
from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.chat.chat_support import ChatSocketClient, SseStream
from tests.fakes.claude import replies
from tests.robustness.servers import ServerProcess, serving
from tests.support.concurrency import run_all

API_KEY = "sk-ant-multiprocess-0123456789abcdef"
TURNS = 6
EDITS = 8
UPDATES = 3
UPDATE_SECONDS = 60.0  # a deadline for each on-demand update to finish, not a speed


@pytest.fixture
def upstream(claude):
    """Chat replies, titles, and cortex updates that put one line at the top of memory.md."""
    counter, lock = iter(range(10_000)), threading.Lock()

    def answer(body):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("A title")
        if not body.get("tools"):
            return replies.text("Noted, thank you!", chunks=["Noted, ", "thank you!"])
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return replies.text("Remembered.")
        with lock:
            n = next(counter)
        return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                             "insert_text": f"- update {n}\n"})])

    claude.default = replies.scripted(answer)
    return claude


@pytest.fixture
def servers(data_dir, tmp_path, upstream, key_hygiene):
    key_hygiene.add_secret(API_KEY)
    env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": upstream.url}
    with serving(ServerProcess(data_dir, tmp_path / "a.log", PERSONA_WORKERS="2", **env),
                 ServerProcess(data_dir, tmp_path / "b.log", PERSONA_WORKERS="1", **env)) as both:
        yield both
    key_hygiene.add_data_dir(data_dir)


def _ws_chat(server, session_id, tag, done):
    with ChatSocketClient(server.ws_url) as ws:
        for n in range(TURNS):
            final = ws.chat(session_id, f"{tag} message {n}")[-1]
            assert final["type"] == "done", final
            done.append(session_id)


def _sse_chat(server, session_id, tag, done):
    for n in range(TURNS):
        body = {"session_id": session_id, "message": f"{tag} message {n}"}
        with SseStream(server.url, "/api/chat/stream", body) as stream:
            assert stream.status == 200, stream.json()
            kind, data = stream.events()[-1]
        assert kind == "done", data
        done.append(session_id)


def _edit(server, persona_id, tag, saved, statuses):
    url = f"/api/personas/{persona_id}/cortex/memory.md"
    for k in range(EDITS):
        line = f"- {tag} edit {k}\n"
        while True:
            status, headers, current = server.call("GET", url)
            statuses.append(status)
            status, _, body = server.call("PUT", url, {"content": current["content"] + line},
                                          {"If-Match": headers["ETag"]})
            statuses.append(status)
            if status == 200:
                saved.append(line)
                break
            assert status == 412, body


def _update(server, persona_id, statuses):
    """On-demand updates; each must finish (within a generous deadline), however busy the other
    process is."""
    for _ in range(UPDATES):
        status, _, body = server.call("POST", f"/api/personas/{persona_id}/cortex/update", {})
        statuses.append(status)
        assert status == 202, body
        job_id, deadline = body["job_id"], time.monotonic() + UPDATE_SECONDS
        while body["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline, f"update still {body['status']}"
            time.sleep(0.02)
            status, _, body = server.call("GET", f"/api/cortex/jobs/{job_id}")
            statuses.append(status)
        assert body["status"] == "done", body


def test_two_processes_share_one_data_directory(servers, data_dir):
    first, second = servers
    persona = first.call("POST", "/api/personas", {"name": "Shared"})[2]
    sessions = [server.call("POST", "/api/sessions", {"persona_id": persona["id"]})[2]["id"]
                for server in (second, first, second, first, second, first)]
    done, saved, statuses = [], [], []
    run_all([(_ws_chat, first, sessions[0], "ws-a", done),
              (_ws_chat, second, sessions[1], "ws-b", done),
              (_sse_chat, first, sessions[2], "sse-a", done),
              (_sse_chat, second, sessions[3], "sse-b", done),
              (_ws_chat, second, sessions[4], "ws-b2", done),
              (_sse_chat, first, sessions[5], "sse-a2", done),
              (_edit, first, persona["id"], "person-a", saved, statuses),
              (_edit, second, persona["id"], "person-b", saved, statuses),
              (_update, first, persona["id"], statuses),
              (_update, second, persona["id"], statuses)])

    _wait_for_updates(data_dir)
    assert [s for s in statuses if s >= 500] == []
    for log in (first.log(), second.log()):
        assert "Traceback" not in log and "Unhandled error" not in log, log[-3000:]
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for session_id in sessions:
            counts = dict(conn.execute("SELECT role, COUNT(*) FROM messages WHERE session_id = ? "
                                       "GROUP BY role", (session_id,)).fetchall())
            assert counts == {"user": TURNS, "assistant": TURNS}
        assert len(done) == len(sessions) * TURNS
        revisions = [dict(row) for row in conn.execute(
            "SELECT id, author, content, committed FROM cortex_revisions WHERE persona_id = ? "
            "AND filename = 'memory.md' ORDER BY id", (persona["id"],))]
    _assert_chain(revisions, saved)
    with open(CortexPaths(str(data_dir)).file(persona["id"], "memory.md"),
              encoding="utf-8", newline="") as handle:
        assert handle.read() == revisions[-1]["content"]


def _wait_for_updates(data_dir, timeout: float = 30.0) -> None:
    """Until no cortex job is queued or running (they run in the server processes, which
    announce nothing to this one, so the database is polled)."""
    deadline = time.monotonic() + timeout
    while True:
        with closing(sqlite3.connect(data_dir / "app.db")) as conn:
            active = conn.execute("SELECT COUNT(*) FROM cortex_jobs WHERE status IN "
                                  "('queued', 'running')").fetchone()[0]
        if active == 0:
            return
        assert time.monotonic() < deadline, f"{active} cortex jobs still active"
        time.sleep(0.05)


def _assert_chain(revisions: list[dict], saved: list[str]) -> None:
    """Each revision is the one before plus one person's line at the end or one update's line
    at the top; every saved edit is in the chain exactly once."""
    assert revisions[0]["author"] == "template"
    assert all(r["committed"] == 1 for r in revisions)
    edits = []
    for before, after in itertools.pairwise(revisions):
        old, new = before["content"], after["content"]
        if after["author"] == "user":
            assert new.startswith(old) and new[len(old):].count("\n") == 1, (before, after)
            edits.append(new[len(old):])
        else:
            assert after["author"] == "ai" and new.endswith(old), (before, after)
            assert new[:len(new) - len(old)].startswith("- update "), (before, after)
    assert sorted(edits) == sorted(saved) and len(saved) == 2 * EDITS
    assert any(r["author"] == "ai" for r in revisions), "no cortex update ran"


def test_one_reply_per_session_across_processes(servers, upstream):
    """A reply streaming through one process makes the session busy in the other too."""
    first, second = servers
    status, _, session = first.call("POST", "/api/sessions", {"persona_id": "default"})
    assert status == 201
    gate = threading.Event()
    upstream.enqueue(replies.gated(replies.text("Slow and steady.", chunks=["Slow", " and steady."]),
                                   gate))
    body = {"session_id": session["id"], "message": "Hello"}
    try:
        with SseStream(first.url, "/api/chat/stream", body) as stream:
            assert stream.next_event()[0] == "start"
            assert stream.next_event() == ("chunk", {"text": "Slow"})
            status, _, refused = second.call("POST", "/api/chat/stream",
                                             {"session_id": session["id"], "message": "Again"})
            assert (status, refused["error"]["code"]) == (409, "session_busy")
            status, _, refused = second.call("DELETE",
                                             f"/api/sessions/{session['id']}/messages/last")
            assert (status, refused["error"]["code"]) == (409, "session_busy")
            gate.set()
            events = []
            while (event := stream.next_event()) is not None:
                events.append(event[0])
            assert events[-1] == "done"
    finally:
        gate.set()
    with SseStream(second.url, "/api/chat/stream",
                   {"session_id": session["id"], "message": "Now?"}) as stream:
        assert stream.status == 200
        events = []
        while (event := stream.next_event()) is not None:
            events.append(event[0])
        assert events[-1] == "done"
