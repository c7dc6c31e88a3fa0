"""SIGKILL during a memory reconciliation (issue 15): the app as it runs in production
(`python -m src.app`, background worker) is killed while its reconciliation waits for the model.
Afterwards every cortex file equals a recorded revision, the job shows as interrupted, and the
restarted app retries the reconciliation until the retracted fact is gone (the person's edit
stays)."""
import json
import sqlite3
import threading
from contextlib import closing

from src.utils.cortex import CORTEX_FILES
from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.chat.chat_support import SseStream, eventually
from tests.fakes.claude import replies
from tests.memory.support import RECONCILE_MARK, add_line, drop_line
from tests.robustness.servers import ServerProcess

PIXEL = "- Jonas has a cat named Pixel."
TEA = "- Jonas likes green tea."


class Model:
    """The fake's script: chat replies, an update that learns Pixel, and a reconciliation that
    hangs until `hang` is cleared (then removes Pixel)."""

    def __init__(self, claude):
        self.hang = True
        self.reconciling = threading.Event()
        claude.default = replies.scripted(self._answer)

    def _answer(self, body: dict):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("Pixel")
        if not body.get("tools"):
            return replies.text("How lovely, a cat!")
        answered = "tool_result" in json.dumps(body["messages"][-1])
        if RECONCILE_MARK not in json.dumps(body["messages"][0]):
            return replies.text("Noted Pixel.") if answered else replies.tool_use([add_line(PIXEL)])
        self.reconciling.set()
        if self.hang:
            return replies.hang()
        return replies.text("Forgot Pixel.") if answered else replies.tool_use([drop_line(PIXEL)])


def _rows(data_dir, sql: str, *params) -> list[dict]:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(sql, params)]


def _assert_files_recorded(data_dir, pid: str) -> None:
    assert _rows(data_dir, "SELECT id FROM cortex_changesets") == []
    for name in CORTEX_FILES:
        newest = _rows(data_dir, "SELECT content FROM cortex_revisions WHERE persona_id = ? AND "
                       "filename = ? AND committed = 1 ORDER BY id DESC LIMIT 1", pid, name)
        disk = (data_dir / "cortex" / "custom" / pid / name).read_text(encoding="utf-8")
        assert disk == newest[0]["content"], f"{name} differs from its newest revision"


def _job(server, job_id: str) -> dict:
    return server.call("GET", f"/api/cortex/jobs/{job_id}")[2]


def test_sigkill_during_a_reconciliation_leaves_recorded_files_and_the_job_is_retried(
        claude, server_env, data_dir, tmp_path):
    model = Model(claude)
    with ServerProcess(data_dir, tmp_path / "first.log", **server_env) as server:
        pid = server.call("POST", "/api/personas", {"name": "Mira", "user_name": "Jonas"})[2]["id"]
        sid = server.call("POST", "/api/sessions", {"persona_id": pid})[2]["id"]
        with SseStream(server.url, "/api/chat/stream",
                       {"session_id": sid, "message": "I adopted a cat named Pixel!"}) as chat:
            assert chat.events()[-1][0] == "done"
        update = server.call("POST", f"/api/personas/{pid}/cortex/update", {})[2]["job_id"]
        eventually(lambda: _job(server, update)["status"] == "done")
        _status, _, memory = server.call("GET", f"/api/personas/{pid}/cortex/memory.md")
        assert PIXEL in memory["content"]
        server.call("PUT", f"/api/personas/{pid}/cortex/memory.md",
                    {"content": memory["content"] + TEA + "\n"},
                    {"If-Match": f'"{memory["revision"]}"'})
        assert server.call("DELETE", f"/api/sessions/{sid}/messages/last")[0] == 200
        assert model.reconciling.wait(20), "the reconciliation never reached the model"
        killed = server.call("GET", f"/api/personas/{pid}/cortex/status")[2]["job_id"]
        assert _job(server, killed)["status"] == "running"
        server.kill()

    _assert_files_recorded(data_dir, pid)
    model.hang = False
    with ServerProcess(data_dir, tmp_path / "second.log", **server_env) as server:
        assert eventually(lambda: _job(server, killed)["status"] == "failed")
        assert (_job(server, killed)["error"], _job(server, killed)["reason"]) == (
            "interrupted", "reconcile")
        retried = eventually(lambda: _rows(
            data_dir, "SELECT id FROM cortex_jobs WHERE reason = 'reconcile' AND "
            "status = 'done'"), timeout=30)
        assert retried[0]["id"] != killed
        memory = server.call("GET", f"/api/personas/{pid}/cortex/memory.md")[2]["content"]
    assert PIXEL not in memory and TEA + "\n" in memory
    _assert_files_recorded(data_dir, pid)
