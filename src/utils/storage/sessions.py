"""Session rows: one conversation with one persona.

`updated_at` follows conversation activity (a message added, edited or deleted), so listing
newest first shows the conversations touched most recently; renaming does not reorder.
"""
import sqlite3

from ..models.sessions import Session, SessionRow
from . import tree
from .clock import utc_now
from .db import transaction

_SELECT = (
    "SELECT s.id, s.persona_id, s.title, s.greeting_index, s.created_at, s.updated_at, "
    "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.on_branch = 1) "
    "AS message_count, s.active_leaf_id, s.user_persona_id, s.imported "
    "FROM sessions s"
)


def create_session(conn: sqlite3.Connection, session_id: str, persona_id: str,
                   title: str = "", greeting_index: int = 0) -> Session:
    """Inserts a session that uses the default user persona (if there is one); raises
    sqlite3.IntegrityError for a taken id or an unknown persona."""
    now = utc_now()
    conn.execute(
        "INSERT INTO sessions (id, persona_id, title, greeting_index, created_at, updated_at, "
        "user_persona_id) VALUES (?, ?, ?, ?, ?, ?, "
        "(SELECT id FROM user_personas WHERE is_default = 1))",
        (session_id, persona_id, title, greeting_index, now, now),
    )
    created = get_session(conn, session_id)
    assert created is not None  # inserted just above
    return created


def get_session(conn: sqlite3.Connection, session_id: str) -> Session | None:
    """The session with its message count, or None."""
    row = conn.execute(f"{_SELECT} WHERE s.id = ?", (session_id,)).fetchone()
    return _shown(row) if row else None


def get_session_row(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    """The session without its message count (a chat turn's read: counting the branch costs
    a scan of the session's messages), or None."""
    row = conn.execute("SELECT id, persona_id, title, greeting_index, created_at, updated_at, "
                       "active_leaf_id, user_persona_id, imported FROM sessions WHERE id = ?",
                       (session_id,)).fetchone()
    return SessionRow.model_validate(dict(row)) if row else None


def list_sessions(conn: sqlite3.Connection, persona_id: str) -> list[Session]:
    """The persona's sessions, most recently active first."""
    rows = conn.execute(
        f"{_SELECT} WHERE s.persona_id = ? ORDER BY s.updated_at DESC, s.rowid DESC",
        (persona_id,),
    ).fetchall()
    return [_shown(row) for row in rows]


def sessions_since(conn: sqlite3.Connection, persona_id: str, since: str | None) -> int:
    """How many of the persona's sessions were created after `since` (all without it)."""
    return conn.execute("SELECT COUNT(*) FROM sessions WHERE persona_id = ? AND created_at > ?",
                        (persona_id, since or "")).fetchone()[0]


def first_session_at(conn: sqlite3.Connection, persona_id: str) -> str | None:
    """When the persona's first session was created, or None."""
    return conn.execute("SELECT MIN(created_at) FROM sessions WHERE persona_id = ?",
                        (persona_id,)).fetchone()[0]


def _shown(row: sqlite3.Row) -> Session:
    """The row as the resource (validated once: `imported`, stored 0/1, becomes a boolean)."""
    return Session.model_validate(dict(row))


def set_session_title(conn: sqlite3.Connection, session_id: str, title: str,
                      *, only_if_untitled: bool = False) -> bool:
    """Sets the title; with `only_if_untitled`, a title the person chose is kept."""
    sql = "UPDATE sessions SET title = ? WHERE id = ?"
    if only_if_untitled:
        sql += " AND title = ''"
    return conn.execute(sql, (title, session_id)).rowcount == 1


def set_greeting_index(conn: sqlite3.Connection, session_id: str, index: int) -> bool:
    """Sets the session's greeting while it has no messages; False otherwise."""
    return conn.execute(
        "UPDATE sessions SET greeting_index = ? WHERE id = ? AND NOT EXISTS "
        "(SELECT 1 FROM messages WHERE session_id = ?)", (index, session_id, session_id)
    ).rowcount == 1


def touch_session(conn: sqlite3.Connection, session_id: str, when: str | None = None) -> None:
    """Marks conversation activity on the session (moves it to the top of its list)."""
    conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                 (when or utc_now(), session_id))


def delete_session(conn: sqlite3.Connection, session_id: str) -> bool:
    """Deletes a session and its messages (ON DELETE CASCADE), logging its active branch as
    retracted first, so memory reconciliation sees what left the conversation."""
    with transaction(conn):
        tree.record_session(conn, session_id)
        return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 1
