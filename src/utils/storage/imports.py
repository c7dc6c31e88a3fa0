"""Imported conversations: a whole message tree stored in the caller's transaction.

Rows go in parents first, so a child's id is above its parent's (the invariant `tree.py` relies
on). Nothing is logged in `message_changes`: an imported message never left or rejoined a
branch. Every row is marked `imported` (migration 0042), which keeps it out of the cortex
trigger until a person asks the persona to learn from it.

Tens of thousands of rows take seconds to insert: every `_CHUNK` rows the greenlet yields
(`cooperative.pause(0)`), so other connections of a gevent worker are served meanwhile; the
transaction stays open, other writers wait on the write lock as for any transaction.
"""
import sqlite3

from ..cooperative import pause
from . import search
from .clock import utc_now

_CHUNK = 500


def insert_conversation(conn: sqlite3.Connection, session_id: str, persona_id: str,
                        title: str, rows: list[tuple[str, str, str, str, int | None]],
                        active_leaf: int | None) -> list[int]:
    """Creates the session and its messages from `rows` of (role, content, status,
    created_at, parent index); `active_leaf` is an index into `rows`. Returns the new ids."""
    on_branch = _path(rows, active_leaf)
    started = min((row[3] for row in rows), default=utc_now())
    conn.execute("INSERT INTO sessions (id, persona_id, title, created_at, updated_at, imported) "
                 "VALUES (?, ?, ?, ?, ?, 1)", (session_id, persona_id, title, started, utc_now()))
    ids: list[int] = []
    for index, (role, content, status, created_at, parent) in enumerate(rows):
        if index and index % _CHUNK == 0:
            pause(0)
        ids.append(conn.execute(
            "INSERT INTO messages (session_id, persona_id, role, content, status, created_at, "
            "parent_id, on_branch, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING id",
            (session_id, persona_id, role, content, status, created_at,
             None if parent is None else ids[parent], int(index in on_branch))).fetchone()[0])
    conn.execute("UPDATE sessions SET active_leaf_id = ? WHERE id = ?",
                 (None if active_leaf is None else ids[active_leaf], session_id))
    search.index_waiting(conn)  # in batches, faster than row by row (migration 0048)
    return ids


def _path(rows: list[tuple[str, str, str, str, int | None]], leaf: int | None) -> set[int]:
    """The indexes from `leaf` up to its root."""
    path: set[int] = set()
    while leaf is not None:
        path.add(leaf)
        leaf = rows[leaf][4]
    return path
