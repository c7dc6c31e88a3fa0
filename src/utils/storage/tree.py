"""The conversation tree of a session: parents, siblings, and the one active branch.

A session's active branch is the path from a root to its `active_leaf_id`; `messages.on_branch`
caches membership so pages, counts and the cortex need no recursive query. Moving the active leaf
rewrites that cache and logs each message that left or rejoined the branch in `message_changes`
(the one record memory reconciliation reads; see the migration 0015 comment).
"""
import hashlib
import sqlite3

from ..models.history import HistoryMessage
from .clock import utc_now
from .db import plain_rows

_PATH = ("WITH RECURSIVE path(id, parent_id) AS ("
         "SELECT id, parent_id FROM messages WHERE id = ? "
         "UNION ALL SELECT m.id, m.parent_id FROM messages m JOIN path p ON m.id = p.parent_id) ")
_ON_BRANCH = ("SELECT m.id, m.role, m.content FROM messages m WHERE m.session_id = "
              "(SELECT session_id FROM messages WHERE id = ?) AND m.on_branch = 1 AND m.id <= ? "
              "ORDER BY m.id DESC LIMIT ?")
_ANCESTORS = (_PATH + "SELECT m.id, m.role, m.content FROM messages m JOIN path p ON m.id = p.id "
              "ORDER BY m.id DESC LIMIT ?")
_SUBTREE = ("WITH RECURSIVE sub(id) AS (SELECT id FROM messages WHERE id = ? "
            "UNION ALL SELECT m.id FROM messages m JOIN sub s ON m.parent_id = s.id) ")


def active_leaf(conn: sqlite3.Connection, session_id: str) -> int | None:
    """The id of the session's active leaf (None for an empty or unknown session)."""
    row = conn.execute("SELECT active_leaf_id FROM sessions WHERE id = ?",
                       (session_id,)).fetchone()
    return row["active_leaf_id"] if row else None


def in_session(conn: sqlite3.Connection, session_id: str, message_id: int) -> bool:
    """True when `message_id` belongs to the session."""
    return conn.execute("SELECT 1 FROM messages WHERE id = ? AND session_id = ?",
                        (message_id, session_id)).fetchone() is not None


def path_ids(conn: sqlite3.Connection, message_id: int) -> list[int]:
    """Ids from the root down to `message_id`."""
    rows = conn.execute(_PATH + "SELECT id FROM path", (message_id,)).fetchall()
    return sorted(row["id"] for row in rows)


def path_messages(conn: sqlite3.Connection, message_id: int, limit: int
                  ) -> list[HistoryMessage]:
    """The last `limit` messages of the path from the root to `message_id`, oldest first.

    A message on the active branch (a chat turn's: the reply is the leaf) is read from the
    branch cache, newest first by the session's index, so a turn reads `limit` rows however
    long the conversation is; any other message walks its ancestors. The rows are plain
    tuples made into `HistoryMessage`s (the chat turn's hot path: no `sqlite3.Row`, no dict)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = plain_rows(cursor, _ON_BRANCH, (message_id, message_id, limit))
    if not rows or rows[0][0] != message_id:  # off the branch: walk its ancestors
        rows = plain_rows(cursor, _ANCESTORS, (message_id, limit))
    return list(map(HistoryMessage._make, reversed(rows)))


def latest_leaf(conn: sqlite3.Connection, message_id: int | None, session_id: str) -> int | None:
    """The newest leaf under `message_id` (itself if it has no children); for None, the newest
    leaf of the whole session. A child's id is above its parent's, so the subtree's highest id
    is a leaf."""
    if message_id is None:
        row = conn.execute("SELECT MAX(id) AS id FROM messages WHERE session_id = ?",
                           (session_id,)).fetchone()
    else:
        row = conn.execute(_SUBTREE + "SELECT MAX(id) AS id FROM sub", (message_id,)).fetchone()
    return row["id"] if row else None


def siblings(conn: sqlite3.Connection, session_id: str) -> dict[int | None, list[int]]:
    """Children ids (oldest first) per parent id, for the whole session."""
    grouped: dict[int | None, list[int]] = {}
    for row in conn.execute("SELECT id, parent_id FROM messages WHERE session_id = ? ORDER BY id",
                            (session_id,)):
        grouped.setdefault(row["parent_id"], []).append(row["id"])
    return grouped


def set_active(conn: sqlite3.Connection, session_id: str, leaf_id: int | None, cause: str,
               *, fresh: int | None = None) -> None:
    """Makes the branch through `leaf_id` the active one (call inside a transaction).

    Messages that leave the branch are logged as retracted (replaced by `fresh` when a new
    message caused it), those that come back as restored; `fresh` itself is new, not restored.
    """
    if fresh is not None and leaf_id == fresh and _extends_leaf(conn, session_id, fresh):
        _mark(conn, [fresh], 1)
        conn.execute("UPDATE sessions SET active_leaf_id = ? WHERE id = ?", (fresh, session_id))
        return
    old = {row["id"] for row in conn.execute(
        "SELECT id FROM messages WHERE session_id = ? AND on_branch = 1", (session_id,))}
    new = set(path_ids(conn, leaf_id)) if leaf_id is not None else set()
    left, back = sorted(old - new), sorted(new - old - {fresh})
    _mark(conn, left, 0)
    _mark(conn, sorted(new - old), 1)
    _log(conn, left, "retracted", cause, fresh)
    _log(conn, back, "restored", cause, None)
    conn.execute("UPDATE sessions SET active_leaf_id = ? WHERE id = ?", (leaf_id, session_id))


def subtree_ids(conn: sqlite3.Connection, message_id: int) -> list[int]:
    """The message and everything below it, oldest first."""
    return [row["id"] for row in conn.execute(_SUBTREE + "SELECT id FROM sub ORDER BY id",
                                              (message_id,))]


def record_subtree(conn: sqlite3.Connection, message_id: int, cause: str) -> list[int]:
    """Logs a message and everything below it as retracted (before they are deleted)."""
    ids = subtree_ids(conn, message_id)
    _log(conn, ids, "retracted", cause, None)
    return ids


def record_session(conn: sqlite3.Connection, session_id: str) -> int:
    """Logs the active branch of a session about to be deleted as retracted (the messages off
    the branch were logged when they left it); returns how many."""
    ids = [row["id"] for row in conn.execute(
        "SELECT id FROM messages WHERE session_id = ? AND on_branch = 1", (session_id,))]
    _log(conn, ids, "retracted", "delete", None)
    return len(ids)


def _extends_leaf(conn: sqlite3.Connection, session_id: str, message_id: int) -> bool:
    """True when the message's parent is the active leaf (the common append: nothing moves)."""
    current = active_leaf(conn, session_id)
    row = conn.execute("SELECT parent_id FROM messages WHERE id = ?", (message_id,)).fetchone()
    return current is not None and row is not None and row["parent_id"] == current


def _mark(conn: sqlite3.Connection, ids: list[int], value: int) -> None:
    conn.executemany("UPDATE messages SET on_branch = ? WHERE id = ?",
                     [(value, message_id) for message_id in ids])


def _log(conn: sqlite3.Connection, ids: list[int], change: str, cause: str,
         replaced_by: int | None) -> None:
    """One `message_changes` row per message; a deleted message's text is kept on its row
    until memory reconciliation has handled it (then erased)."""
    if not ids:
        return
    now = utc_now()
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, session_id, persona_id, content FROM messages "
                        f"WHERE id IN ({marks})", ids).fetchall()
    conn.executemany(
        "INSERT INTO message_changes (persona_id, session_id, message_id, change, cause, "
        "replaced_by, content_sha256, created_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(row["persona_id"], row["session_id"], row["id"], change, cause, replaced_by,
          hashlib.sha256(row["content"].encode("utf-8", "surrogatepass")).hexdigest(), now,
          row["content"] if cause == "delete" and change == "retracted" else None)
         for row in rows])
