"""A backup taken while chats stream, a cortex update runs and the person edits the cortex
restores to a consistent state (DESIGN §12): SQLite's integrity check passes and every cortex
file equals a revision recorded in the restored database."""
import http.client
import json
import sqlite3
import threading
from contextlib import closing
from urllib.parse import urlsplit

import pytest

from src.utils import provider
from src.utils.portability.backup import write_backup_file
from src.utils.portability.restore import restore_backup
from tests.chat.chat_support import SseStream, live_config
from tests.fakes.claude import replies
from tests.portability.backup_support import check_consistent, cli

DEADLINE = 120


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, ANTHROPIC_TIMEOUT=DEADLINE)


class PatientStream(SseStream):
    """An SSE stream that waits as long as the test's deadline for each event."""

    def __init__(self, base_url: str, path: str, body: dict):
        parts = urlsplit(base_url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=DEADLINE)
        self.conn.request("POST", path, json.dumps(body).encode(),
                          {"Content-Type": "application/json"})
        self.response = self.conn.getresponse()


def _stream(server, sid: str, message: str, started: threading.Event, out: list) -> None:
    body = {"session_id": sid, "message": message}
    with PatientStream(server.url, "/api/chat/stream", body) as s:
        while (event := s.next_event()) is not None:
            out.append(event)
            if event[0] == "chunk":
                started.set()


def _edit_until(cortex, pid: str, stop: threading.Event, count: list) -> None:
    while not stop.is_set():
        count[0] += 1
        cortex.write_file(pid, "relationship.md", f"# Relationship\nEdit number {count[0]}.\n")


def _wait(event: threading.Event, what: str) -> None:
    assert event.wait(DEADLINE), f"timed out waiting for {what}"


def _restored_rows(path, sql: str) -> list:
    with closing(sqlite3.connect(path / "app.db")) as conn:
        return conn.execute(sql).fetchall()


def test_a_backup_mid_stream_and_mid_update_restores_consistently(server, app, client, claude,
                                                                  script, data_dir, tmp_path):
    pid = client.post("/api/personas", json={"name": "Mira"}).get_json()["id"]
    sids = [client.post("/api/sessions", json={"persona_id": pid}).get_json()["id"]
            for _ in range(3)]
    script.reply("Nice to meet you, Sam.")
    _stream(server, sids[0], "I am Sam.", threading.Event(), [])
    chat_gate, update_gate, update_asked = threading.Event(), threading.Event(), threading.Event()
    script.reply(*(replies.gated(replies.text(f"A long streamed reply number {i}."), chat_gate)
                   for i in range(3)))

    def update_reply(body):
        update_asked.set()
        return replies.tool_use([("write_file", {"filename": "memory.md",
                                                  "content": "# Memory\nSam introduced himself.\n"}),
                                 ("write_file", {"filename": "soul.md",
                                                 "content": "# Soul\nI like new people.\n"})])
    script.update(replies.gated(replies.scripted(update_reply), update_gate),
                  replies.text("Noted Sam."))
    job, _ = provider.get_cortex_trigger(app).request_update(pid)
    worker = provider.get_cortex_worker(app)
    threads = [threading.Thread(target=worker.run_pending)]
    started = [threading.Event() for _ in sids]
    outputs: list[list] = [[] for _ in sids]
    threads += [threading.Thread(target=_stream, args=(server, sid, f"Hello {i}", started[i],
                                                       outputs[i])) for i, sid in enumerate(sids)]
    stop, edits = threading.Event(), [0]
    threads.append(threading.Thread(target=_edit_until, args=(
        provider.get_cortex_service(app), pid, stop, edits)))
    for thread in threads:
        thread.start()
    try:
        for event in started:
            _wait(event, "a chat to stream")
        assert claude.wait_for_requests(5, timeout=DEADLINE)
        first, second = tmp_path / "during.zip", tmp_path / "after.zip"
        done = cli(data_dir, "backup", str(first))
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        chat_gate.set()
        update_gate.set()
    write_backup_file(str(data_dir), str(second))
    stop.set()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive()
    assert edits[0] > 1
    assert all(out and out[-1][0] == "done" for out in outputs), outputs
    jobs = provider.get_db(app).conn().execute("SELECT status FROM cortex_jobs WHERE id = ?",
                                               (job.id,)).fetchall()
    assert [tuple(j) for j in jobs] == [("done",)]
    for name, archive in (("during", first), ("after", second)):
        target = tmp_path / name
        restore_backup(str(archive), str(target))
        assert check_consistent(target) == 6
    during = tmp_path / "during"
    assert _restored_rows(during, f"SELECT status FROM cortex_jobs WHERE id = '{job.id}'") \
        in ([("queued",)], [("running",)])
    pending = _restored_rows(during, "SELECT count(*) FROM messages WHERE role = 'user' "
                                     "AND content LIKE 'Hello %'")
    assert pending == [(3,)]
