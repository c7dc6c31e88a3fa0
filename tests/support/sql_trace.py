"""The SQL statements a piece of code runs on one connection (SQLite's trace callback)."""
import sqlite3
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def traced(conn: sqlite3.Connection, action: Callable[[], T]) -> tuple[T, list[str]]:
    """`action()` and the statements it ran on `conn`, in order."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        return action(), seen
    finally:
        conn.set_trace_callback(None)
