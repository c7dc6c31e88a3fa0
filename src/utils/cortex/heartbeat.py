"""A lease renewed while work runs: cortex jobs (worker.py) and session titles (chat_titles.py).

The owner of a running row renews its lease every third of it, on its own connection and
thread, so a process that hangs or dies lets its row's lease run out and recovery take it. The
connection is opened at the first renewal: most jobs end long before it (a lease is a minute,
a cortex update with a fast model a fraction of a second), and opening one costs 0.4-1.1 ms of CPU
(its PRAGMAs and the schema, measured), which every job paid for nothing (issue #23).
"""
import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Self

from ..storage.db import connect

log = logging.getLogger(__name__)
Renew = Callable[[sqlite3.Connection], bool]


class Heartbeat:
    """Calls `renew(conn)` every `lease_seconds / 3` until the block ends or it returns False."""

    def __init__(self, db_path: str, renew: Renew, lease_seconds: float, what: str):
        self._db_path = db_path
        self._renew = renew
        self._lease = lease_seconds
        self._what = what
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while not self._stop.wait(self._lease / 3):
                try:
                    if conn is None:
                        conn = connect(self._db_path)
                    if not self._renew(conn):
                        log.warning("%s lost its lease; its result will not apply", self._what)
                        return
                except Exception:
                    log.exception("Could not renew the lease of %s", self._what)
        finally:
            if conn is not None:
                conn.close()
