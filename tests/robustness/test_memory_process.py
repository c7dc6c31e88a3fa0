"""The memory process (issue #23): cortex updates and titles run beside the chat workers.

The app as it runs in production (`python -m src.app`): the gunicorn master starts one
`src.memory_process` child, which claims the jobs and titles the workers queue; the workers'
sockets still hear of both. It is started again when it dies (a job it was running is failed as
interrupted and queued again), stopped with the server, and never outlives a killed master.
`PERSONA_MEMORY_PROCESS=0` keeps the earlier model (jobs in the workers).
"""
import os
import signal
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.chat.chat_support import ChatSocketClient, eventually
from tests.fakes.claude import replies
from tests.robustness.servers import ServerProcess

API_KEY = "sk-ant-memory-process-0123456789ab"
LINE = "- Likes tea."
DEADLINE = 30.0  # bounds a failure only


class Model:
    """Chat replies, titles, and updates that add LINE to memory.md; an update hangs while
    `hang` is set (and sets `updating` when it reaches the fake)."""

    def __init__(self, claude):
        self.hang = False
        self.updating = threading.Event()
        claude.default = replies.scripted(self._answer)

    def _answer(self, body: dict):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("Tea talk")
        if not body.get("tools"):
            return replies.text("Lovely.", chunks=["Love", "ly."])
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return replies.text("Remembered.")
        self.updating.set()
        if self.hang:
            return replies.hang()
        return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                             "insert_text": LINE + "\n"})])


@pytest.fixture
def model(claude):
    return Model(claude)


@pytest.fixture
def env(claude, key_hygiene, data_dir):
    key_hygiene.add_secret(API_KEY)
    yield {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": claude.url,
           "PERSONA_WORKERS": "2"}
    key_hygiene.add_data_dir(data_dir)


def _children(pid: int) -> dict[int, str]:
    """The live child processes of `pid` and their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found[int(entry.name)] = cmdline
    return found


def _memory_pid(server: ServerProcess) -> int | None:
    pids = [pid for pid, cmd in _children(server.proc.pid).items() if "src.memory_process" in cmd]
    assert len(pids) <= 1, pids
    return pids[0] if pids else None


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _row(data_dir, sql: str, *params) -> dict | None:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute(sql, params).fetchone()
        return dict(row) if row else None


def _start_chat(server: ServerProcess) -> tuple[str, str]:
    persona = server.call("POST", "/api/personas", {"name": "Mira"})[2]["id"]
    session = server.call("POST", "/api/sessions", {"persona_id": persona})[2]["id"]
    return persona, session


@pytest.mark.parametrize("mode", ["1", "0"])
def test_updates_and_titles_reach_the_socket_from_wherever_they_ran(model, env, data_dir,
                                                                    tmp_path, mode):
    with ServerProcess(data_dir, tmp_path / "server.log", PERSONA_MEMORY_PROCESS=mode,
                       **env) as server:
        memory = _memory_pid(server)
        workers = set(_children(server.proc.pid)) - {memory}
        assert (memory is not None) == (mode == "1") and len(workers) == 2
        persona, session = _start_chat(server)
        with ChatSocketClient(server.ws_url) as ws:
            ws.send(type="subscribe", persona_id=persona)
            assert ws.chat(session, "I like tea.")[-1]["type"] == "done"
            assert ws.first("title") == {"type": "title", "session_id": session,
                                         "title": "Tea talk"}
            job = server.call("POST", f"/api/personas/{persona}/cortex/update", {})[2]["job_id"]
            cortex = ws.first("cortex")
        assert (cortex["job_id"], cortex["status"]) == (job, "done")
        ran = _row(data_dir, "SELECT claimed_by FROM cortex_jobs WHERE id = ?", job)
        assert ran["claimed_by"] == memory if mode == "1" else ran["claimed_by"] in workers
        title = _row(data_dir, "SELECT status FROM title_jobs WHERE session_id = ?", session)
        assert title == {"status": "done"}
        assert "Traceback" not in server.log(), server.log()[-3000:]


def test_a_killed_memory_process_is_replaced_and_its_job_runs_again(model, env, data_dir,
                                                                    tmp_path):
    model.hang = True
    with ServerProcess(data_dir, tmp_path / "server.log", **env) as server:
        persona, session = _start_chat(server)
        with ChatSocketClient(server.ws_url) as ws:
            assert ws.chat(session, "I like tea.")[-1]["type"] == "done"
        first = _memory_pid(server)
        job = server.call("POST", f"/api/personas/{persona}/cortex/update", {})[2]["job_id"]
        assert model.updating.wait(DEADLINE), "the update never reached the model"
        assert _row(data_dir, "SELECT status, claimed_by FROM cortex_jobs WHERE id = ?",
                    job) == {"status": "running", "claimed_by": first}
        model.hang = False
        os.kill(first, signal.SIGKILL)

        second = eventually(lambda: (pid := _memory_pid(server)) != first and pid, DEADLINE)
        killed = eventually(lambda: _row(
            data_dir, "SELECT status, error FROM cortex_jobs WHERE id = ? AND status = "
            "'failed'", job), DEADLINE)
        assert killed == {"status": "failed", "error": "interrupted"}
        retried = eventually(lambda: _row(
            data_dir, "SELECT id, claimed_by FROM cortex_jobs WHERE persona_id = ? AND "
            "status = 'done'", persona), DEADLINE)
        assert retried["claimed_by"] == second
        memory = server.call("GET", f"/api/personas/{persona}/cortex/memory.md")[2]
        assert LINE in memory["content"]


def test_the_memory_process_stops_with_the_server(model, env, data_dir, tmp_path):
    server = ServerProcess(data_dir, tmp_path / "server.log", **env)
    with server:
        memory = _memory_pid(server)
    assert server.proc.returncode == 0
    assert _gone(memory)



def test_the_master_never_loads_the_sdk(model, env, data_dir, tmp_path):
    """The master forks the workers and supervises; the SDK and its compiled dependencies
    (pydantic-core, jiter) are the workers' (a worker module imported at the top of
    `server.py` once put 53 MiB into the master)."""
    with ServerProcess(data_dir, tmp_path / "server.log", **env) as server:
        maps = Path(f"/proc/{server.proc.pid}/maps").read_text()
    loaded = {line.rsplit("/", 1)[-1] for line in maps.splitlines() if ".so" in line}
    assert not {name for name in loaded if name.startswith(("_pydantic_core", "jiter"))}

def test_neither_the_memory_process_nor_a_worker_outlives_a_killed_master(model, env, data_dir,
                                                                          tmp_path):
    """Both get Linux's parent-death signal (`parent_death.py`): a worker no longer checks its
    parent every second."""
    server = ServerProcess(data_dir, tmp_path / "server.log", **env)
    server.start()
    try:
        server.wait_until_up()
        memory = eventually(lambda: _memory_pid(server), DEADLINE)
        workers = set(_children(server.proc.pid)) - {memory}
        assert len(workers) == 2
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(DEADLINE)
        eventually(lambda: _gone(memory) and all(_gone(pid) for pid in workers), DEADLINE)
    finally:
        try:
            os.killpg(server.proc.pid, signal.SIGKILL)  # whatever a failure left
        except ProcessLookupError:
            pass
        server.wait_stopped()
