"""Chat imports under a crash and a race (DESIGN §16, docs/chat-import.md), on the app as it runs
in production (`python -m src.app`): the whole server SIGKILLed while a 50,000-message import
is being inserted leaves, after a restart, either the whole conversation or nothing (never a
session without its messages); two clients importing the same file at once get two complete
conversations."""
import json
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

from src.utils.limits import CHAT_IMPORT
from tests.robustness.hostile_uploads import upload
from tests.robustness.servers import ServerProcess

PATH = "/api/personas/default/chats/import"


def _chat(messages: int) -> bytes:
    header = {"user_name": "Robin", "character_name": "Seraphina", "create_date": 1717687020000}
    lines = [json.dumps(header)] + [json.dumps(
        {"name": "Robin" if i % 2 == 0 else "Seraphina", "is_user": i % 2 == 0,
         "mes": f"message {i} " + "words " * 20, "send_date": 1717687020000 + i * 1000})
        for i in range(messages)]
    return "\n".join(lines).encode("utf-8")


def _imported(data_dir) -> list[tuple[str, int, int]]:
    """(session id, messages stored, active leaf set) of every imported session."""
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        return conn.execute(
            "SELECT s.id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), "
            "s.active_leaf_id IS NOT NULL FROM sessions s WHERE s.imported = 1").fetchall()


def _wal_grows(data_dir, deadline: float = 120.0) -> None:
    """Waits until the import's transaction has written pages to the WAL (the insert is under
    way); the deadline only bounds a failure."""
    wal, end = data_dir / "app.db-wal", time.monotonic() + deadline
    start = wal.stat().st_size if wal.exists() else 0
    while not (wal.exists() and wal.stat().st_size > start + 4 * 1024 * 1024):
        assert time.monotonic() < end, "the import never started writing"
        time.sleep(0.01)


def test_a_server_killed_mid_import_leaves_all_or_nothing(tmp_path):
    data_dir = tmp_path / "data"
    data = _chat(CHAT_IMPORT["messages"])
    server = ServerProcess(data_dir, tmp_path / "server.log", PERSONA_WORKERS="1")
    with server, ThreadPoolExecutor(1) as pool:
        pending = pool.submit(upload, server.port, PATH, data, timeout=300)
        _wal_grows(data_dir)
        server.kill()
        assert isinstance(pending.exception(timeout=60), OSError)
    with ServerProcess(data_dir, tmp_path / "restart.log", PERSONA_WORKERS="1") as restarted:
        listed = restarted.call("GET", "/api/sessions?persona_id=default")[2]["sessions"]
    found = _imported(data_dir)
    assert [(count, leaf) for _, count, leaf in found] in ([], [(CHAT_IMPORT["messages"], 1)])
    assert all(not s.get("imported") or s["message_count"] == CHAT_IMPORT["messages"]
               for s in listed), listed
    assert not os.path.exists(data_dir / "app.db-journal")


def test_two_clients_importing_the_same_file_at_once_get_two_whole_conversations(tmp_path):
    data_dir = tmp_path / "data"
    data = _chat(2000)
    with ServerProcess(data_dir, tmp_path / "server.log") as server, ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: upload(server.port, PATH, data), range(2)))
    assert [status for status, _ in results] == [201, 201], results
    ids = {body["id"] for _, body in results}
    assert len(ids) == 2
    assert sorted(_imported(data_dir)) == sorted((sid, 2000, 1) for sid in ids)
