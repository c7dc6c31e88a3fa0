"""The lease heartbeat of cortex and title jobs: it renews on a connection of its own, opened
only when the first renewal is due (a job shorter than a third of its lease opens none)."""
import os
import sqlite3
import threading

from src.utils.cortex.heartbeat import Heartbeat
from tests.chat.chat_support import eventually


def _open_to(path: str) -> int:
    """How many of this process's descriptors are open on `path`."""
    target = os.path.realpath(path)
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            found += os.readlink(f"/proc/self/fd/{fd}") == target
        except OSError:
            pass
    return found


def _database(tmp_path) -> str:
    path = str(tmp_path / "jobs.db")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE lease (until REAL)")
        conn.execute("INSERT INTO lease VALUES (0)")
    return path


def test_a_job_that_ends_before_its_first_renewal_opens_no_connection(tmp_path):
    path = _database(tmp_path)
    renewed = threading.Event()

    def renew(conn: sqlite3.Connection) -> bool:
        renewed.set()
        return True

    before = _open_to(path)
    with Heartbeat(path, renew, lease_seconds=600, what="A short job"):
        assert _open_to(path) == before
    assert _open_to(path) == before
    assert not renewed.is_set()


def test_renewals_run_on_a_working_connection_that_is_closed_at_the_end(tmp_path):
    path = _database(tmp_path)
    beats: list[float] = []
    twice = threading.Event()
    before = _open_to(path)

    def renew(conn: sqlite3.Connection) -> bool:
        conn.execute("UPDATE lease SET until = until + 1")
        beats.append(conn.execute("SELECT until FROM lease").fetchone()[0])
        if len(beats) == 2:
            twice.set()
        return True

    with Heartbeat(path, renew, lease_seconds=0.15, what="A long job"):
        assert twice.wait(10), "the lease was not renewed twice"
        assert _open_to(path) > before
    assert beats[:2] == [1, 2]
    assert _open_to(path) == before


def test_a_lost_lease_ends_the_heartbeat_and_closes_its_connection(tmp_path):
    path = _database(tmp_path)
    calls: list[int] = []
    before = _open_to(path)

    def renew(conn: sqlite3.Connection) -> bool:
        calls.append(1)
        return False

    with Heartbeat(path, renew, lease_seconds=0.06, what="A job"):
        # the beat at 20 ms, then its connection closed, while the block still runs
        eventually(lambda: calls and _open_to(path) == before)
        beats_then = len(calls)
    assert beats_then == len(calls) == 1
