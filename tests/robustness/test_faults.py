"""The upstream failing in every way the fake can while chats, cortex updates and edits run at once.

Two WebSocket and two SSE clients chat through the real server, each walking through every chat
fault (HTTP 401/429/500/529, no answer, headers then silence, a dropped connection, an `error`
event mid-stream, a stream that ends without its stop reason); meanwhile cortex updates meet
every fault the non-streaming tool run can, and a person edits the same cortex file with
If-Match, retrying on 412. Afterwards: no 5xx, every failure reported with its code, every user
message stored, every file on disk exactly one recorded revision, no edit or update lost.
"""
import hashlib
import http.client
import json
import sqlite3
import threading
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.cortex.paths import CortexPaths
from src.utils.storage.messages import add_message
from tests.chat.chat_support import ChatSocketClient, SseStream
from tests.robustness.faults_support import (
    CHAT_FAULTS,
    REPLY,
    UPDATE_FAULTS,
    FaultyUpstream,
    chat_message,
    job_message,
)
from tests.support.concurrency import run_all

API_KEY = "sk-ant-faults-test-0123456789abcdef"
EDITS = 12
# The hang and stall faults wait it out; every other reply must keep its gaps under it while six
# clients share the process, so it leaves a loaded machine room.
UPSTREAM_TIMEOUT = 3.0


@pytest.fixture
def app_config(app_config, claude):
    return {**app_config, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": claude.url,
            "ANTHROPIC_TIMEOUT": UPSTREAM_TIMEOUT, "CORTEX_WORKER": True}


@pytest.fixture
def upstream(claude, app):
    yield FaultyUpstream(claude)
    provider.get_cortex_worker(app).stop()  # the app's shutdown closes the API client


class Http:
    """JSON requests to the live server; every status is kept for the no-5xx check."""

    def __init__(self, port: int):
        self.port = port
        self.statuses: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def call(self, method: str, path: str, body=None, headers=None):
        with closing(http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)) as conn:
            data = None if body is None else json.dumps(body)
            conn.request(method, path, data, {"Content-Type": "application/json",
                                               **(headers or {})})
            response = conn.getresponse()
            payload = json.loads(response.read() or b"null")
            with self._lock:
                self.statuses.append((f"{method} {path}", response.status))
            return response.status, response.headers, payload


def _ws_chats(server, session_id: str, who: str, outcomes: list) -> None:
    with ChatSocketClient(server.ws_url) as ws:
        for n, fault in enumerate(CHAT_FAULTS):
            final = ws.chat(session_id, chat_message(fault, who, n))[-1]
            outcomes.append((fault, final["type"], final.get("code")))


def _sse_chats(server, session_id: str, who: str, outcomes: list) -> None:
    for n, fault in enumerate(reversed(list(CHAT_FAULTS))):
        body = {"session_id": session_id, "message": chat_message(fault, who, n)}
        with SseStream(server.url, "/api/chat/stream", body) as stream:
            assert stream.status == 200, stream.json()
            kind, data = stream.events()[-1]
        outcomes.append((fault, kind, data.get("code")))


def _updates(app, api: Http, persona_id: str, session_id: str, jobs: list) -> None:
    worker, conn = provider.get_cortex_worker(app), provider.get_db(app).conn()
    for index, fault in enumerate(UPDATE_FAULTS):
        add_message(conn, session_id, "user", job_message(index, fault))
        status, _, started = api.call("POST", f"/api/personas/{persona_id}/cortex/update", {})
        assert status == 202, started
        job = worker.wait_for_job(started["job_id"], timeout=30)
        jobs.append((fault, job.status, job.error))


def _edits(api: Http, persona_id: str, saved: list) -> None:
    url = f"/api/personas/{persona_id}/cortex/memory.md"
    for k in range(EDITS):
        while True:
            _, headers, current = api.call("GET", url)
            line = f"- edit {k} by the person\n"
            status, _, body = api.call("PUT", url, {"content": current["content"] + line},
                                       {"If-Match": headers["ETag"]})
            if status == 200:
                saved.append(line)
                break
            assert status == 412, body


def _rows(data_dir, sql: str, *params) -> list[dict]:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql, params)]


def test_every_upstream_fault_while_chats_updates_and_edits_run(app, server, upstream, data_dir):
    api = Http(server.port)
    _, _, talker = api.call("POST", "/api/personas", {"name": "Talker"})
    _, _, keeper = api.call("POST", "/api/personas", {"name": "Keeper"})
    sessions = [api.call("POST", "/api/sessions", {"persona_id": talker["id"]})[2]["id"]
                for _ in range(4)]
    keeper_session = api.call("POST", "/api/sessions", {"persona_id": keeper["id"]})[2]["id"]
    chats, jobs, saved = [], [], []

    run_all([(_ws_chats, server, sessions[0], "ws0", chats),
              (_ws_chats, server, sessions[1], "ws1", chats),
              (_sse_chats, server, sessions[2], "sse0", chats),
              (_sse_chats, server, sessions[3], "sse1", chats),
              (_updates, app, api, keeper["id"], keeper_session, jobs),
              (_edits, api, keeper["id"], saved)])

    provider.get_cortex_worker(app).stop()  # lets a threshold-triggered update finish first
    assert [s for s in api.statuses if s[1] >= 500] == []
    expected_chats = sorted((f, CHAT_FAULTS[f][1], CHAT_FAULTS[f][2])
                            for f in CHAT_FAULTS for _ in range(4))
    assert sorted(chats) == expected_chats
    assert jobs == [(f, UPDATE_FAULTS[f][1], UPDATE_FAULTS[f][2]) for f in UPDATE_FAULTS]
    _assert_messages_kept(data_dir, sessions)
    _assert_cortex_intact(data_dir, [talker["id"], keeper["id"], "default"])
    with open(CortexPaths(str(data_dir)).file(keeper["id"], "memory.md"),
              encoding="utf-8") as memory:
        text = memory.read()
    assert all(line in text for line in saved) and len(saved) == EDITS
    assert "- fact from job 0\n" in text


def _assert_messages_kept(data_dir, sessions) -> None:
    """Every sent message is stored once; only the one fault-free reply is complete, every
    partial one is kept as `incomplete`."""
    for session_id in sessions:
        users = _rows(data_dir, "SELECT content FROM messages WHERE session_id = ? AND "
                      "role = 'user' ORDER BY id", session_id)
        assert len(users) == len(CHAT_FAULTS)
        assert sorted(u["content"].split("]")[0] for u in users) == \
            sorted(f"[fault={fault}" for fault in CHAT_FAULTS)
        replies = _rows(data_dir, "SELECT content, status FROM messages WHERE "
                        "session_id = ? AND role = 'assistant'", session_id)
        assert all(REPLY.startswith(reply["content"]) for reply in replies)
        assert [r["content"] for r in replies if r["status"] == "complete"] == [REPLY]


def _assert_cortex_intact(data_dir, persona_ids) -> None:
    """Each file is byte for byte its newest revision; each revision's hash matches its text."""
    paths = CortexPaths(str(data_dir))
    for persona_id in persona_ids:
        for name in ("memory.md", "soul.md", "relationship.md"):
            revisions = _rows(data_dir, "SELECT id, content, sha256, committed FROM "
                              "cortex_revisions WHERE persona_id = ? AND filename = ? "
                              "ORDER BY id", persona_id, name)
            assert revisions and all(r["committed"] == 1 for r in revisions)
            for revision in revisions:
                digest = hashlib.sha256(revision["content"].encode("utf-8")).hexdigest()
                assert digest == revision["sha256"]
            with open(paths.file(persona_id, name), encoding="utf-8", newline="") as handle:
                assert handle.read() == revisions[-1]["content"]
