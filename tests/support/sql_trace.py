"""The SQL statements a piece of code runs: on one connection (`traced`), or on the
connections a `Database` hands its threads (`traced_pool`), whichever thread uses them."""
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from src.utils.storage import Database

T = TypeVar("T")


def traced(conn: sqlite3.Connection, action: Callable[[], T]) -> tuple[T, list[str]]:
    """`action()` and the statements it ran on `conn`, in order."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        return action(), seen
    finally:
        conn.set_trace_callback(None)


@contextmanager
def traced_pool(db: Database, size: int = 8) -> Iterator[list[str]]:
    """The statements run inside the `with`, in order, on the connections `db` hands out then:
    `size` connections are taken from its pool (or opened) by as many threads at once, traced
    and handed back, so every thread that takes one meanwhile is seen (one that opens a new
    connection, when more than `size` are in use at once, is not). The caller's own thread
    must hold no connection of `db` on entry."""
    seen: list[str] = []
    lock = threading.Lock()
    taken: list[sqlite3.Connection] = []
    all_taken = threading.Barrier(size + 1)

    def append(statement: str) -> None:
        with lock:
            seen.append(statement)

    def take() -> None:
        conn = db.conn()
        conn.set_trace_callback(append)
        with lock:
            taken.append(conn)
        all_taken.wait()  # held until every thread has one: no two take the same
        db.close_thread()

    threads = [threading.Thread(target=take) for _ in range(size)]
    for thread in threads:
        thread.start()
    all_taken.wait()
    for thread in threads:
        thread.join()
    try:
        yield seen
    finally:
        for conn in taken:
            try:
                conn.set_trace_callback(None)
            except sqlite3.ProgrammingError:  # closed meanwhile
                pass
