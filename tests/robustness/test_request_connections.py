"""Requests hand their SQLite connection back to the pool when their response is written
(src/server.py `Worker.handle_request`), on the app as it runs (`python -m src.app`, one gevent
worker): a request's greenlet used to drop it, so every request opened a new one (its PRAGMAs,
about 1.5 ms of CPU) and the dropped ones kept their files open until collected."""
import os

from tests.robustness.servers import ServerProcess
from tests.robustness.stall_watch import worker_pid


def _database_files(pid: int, db_path: str) -> int:
    """How many descriptors process `pid` holds on the database file."""
    found = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found += os.readlink(f"/proc/{pid}/fd/{fd}") == db_path
        except OSError:  # closed meanwhile
            continue
    return found


def test_requests_on_new_connections_reuse_one_database_connection(data_dir, tmp_path):
    with ServerProcess(data_dir, tmp_path / "a.log", PERSONA_WORKERS="1") as server:
        assert server.proc is not None
        worker, db_path = worker_pid(server), str(data_dir / "app.db")
        status, _, body = server.call("POST", "/api/sessions", {"persona_id": "default"})
        assert status == 201
        held = _database_files(worker, db_path)
        for _ in range(12):  # each on its own HTTP connection, one after the other
            assert server.call("GET", f"/api/sessions/{body['id']}")[0] == 200
            assert server.call("GET", "/api/sessions/nosuchsession000")[0] == 404
        assert _database_files(worker, db_path) == held
