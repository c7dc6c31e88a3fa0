"""Message rows. Ids grow globally (AUTOINCREMENT), so they order a session's messages and let
the cortex trigger count "the persona's messages after id N"."""
import sqlite3

from .clock import utc_now
from .db import transaction
from .sessions import touch_session

_COLUMNS = "id, session_id, persona_id, role, content, status, created_at"


def add_message(conn: sqlite3.Connection, session_id: str, role: str, content: str,
                status: str = "complete") -> dict:
    """Stores a message (persona taken from the session) and marks activity on the session.

    Raises LookupError for an unknown session and sqlite3.IntegrityError for a bad role/status.
    """
    now = utc_now()
    with transaction(conn):
        row = conn.execute(
            "INSERT INTO messages (session_id, persona_id, role, content, status, created_at) "
            f"SELECT id, persona_id, ?, ?, ?, ? FROM sessions WHERE id = ? RETURNING {_COLUMNS}",
            (role, content, status, now, session_id),
        ).fetchone()
        if row is None:
            raise LookupError(f"unknown session: {session_id}")
        touch_session(conn, session_id, now)
    return dict(row)


def get_message(conn: sqlite3.Connection, message_id: int) -> dict | None:
    """The message with `message_id`, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
    return dict(row) if row else None


def list_messages(conn: sqlite3.Connection, session_id: str, *, before_id: int | None = None,
                  limit: int = 50) -> list[dict]:
    """One page of a session: the newest `limit` messages older than `before_id`, oldest first."""
    sql = f"SELECT {_COLUMNS} FROM messages WHERE session_id = ?"
    params: list = [session_id]
    if before_id is not None:
        sql += " AND id < ?"
        params.append(before_id)
    rows = conn.execute(sql + " ORDER BY id DESC LIMIT ?", (*params, limit)).fetchall()
    return [dict(row) for row in reversed(rows)]


def last_messages(conn: sqlite3.Connection, session_id: str, n: int) -> list[dict]:
    """The session's last `n` messages, oldest first."""
    return list_messages(conn, session_id, limit=n)


def update_message(conn: sqlite3.Connection, message_id: int, *, content: str | None = None,
                   status: str | None = None) -> dict | None:
    """Changes a message's content and/or status; returns it, or None when it does not exist."""
    changes = {name: value for name, value in (("content", content), ("status", status))
               if value is not None}
    with transaction(conn):
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            conn.execute(f"UPDATE messages SET {assignments} WHERE id = ?",
                         (*changes.values(), message_id))
        message = get_message(conn, message_id)
        if message and changes:
            touch_session(conn, message["session_id"])
    return message


def delete_message(conn: sqlite3.Connection, message_id: int) -> bool:
    """Deletes one message; True when it existed."""
    with transaction(conn):
        row = conn.execute("SELECT session_id FROM messages WHERE id = ?",
                           (message_id,)).fetchone()
        if row is None:
            return False
        conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))
        touch_session(conn, row["session_id"])
    return True


def count_messages(conn: sqlite3.Connection, session_id: str | None = None, *,
                   persona_id: str | None = None, after_id: int | None = None,
                   before_id: int | None = None) -> int:
    """Counts messages matching every filter given (session, persona, id range)."""
    filters = (("session_id = ?", session_id), ("persona_id = ?", persona_id),
               ("id > ?", after_id), ("id < ?", before_id))
    used = [(clause, value) for clause, value in filters if value is not None]
    where = " AND ".join(clause for clause, _ in used) or "1"
    row = conn.execute(f"SELECT COUNT(*) FROM messages WHERE {where}",
                       [value for _, value in used]).fetchone()
    return row[0]


def history_for_prompt(conn: sqlite3.Connection, session_id: str, limit: int) -> list[dict]:
    """The last `limit` messages as Messages-API turns `{role, content}`.

    Empty messages (a reply stopped before its first token) are skipped, the history starts with
    a user turn, and consecutive turns of one role are joined, so the list is always valid input.
    """
    turns: list[dict] = []
    for message in last_messages(conn, session_id, limit):
        if not message["content"].strip():
            continue
        if not turns and message["role"] != "user":
            continue
        if turns and turns[-1]["role"] == message["role"]:
            turns[-1]["content"] += "\n\n" + message["content"]
        else:
            turns.append({"role": message["role"], "content": message["content"]})
    return turns
