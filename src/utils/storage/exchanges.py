"""Queries about the end of a conversation, for regenerate, edit last and delete last."""
import sqlite3

from .messages import get_message


def last_message(conn: sqlite3.Connection, session_id: str, role: str | None = None
                 ) -> dict | None:
    """The session's newest message (of `role`, when given), or None."""
    sql = "SELECT id FROM messages WHERE session_id = ?"
    params: tuple = (session_id,)
    if role is not None:
        sql += " AND role = ?"
        params += (role,)
    row = conn.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchone()
    return get_message(conn, row["id"]) if row else None


def ids_from(conn: sqlite3.Connection, session_id: str, first_id: int) -> list[int]:
    """Ids of the session's messages from `first_id` on, oldest first."""
    rows = conn.execute("SELECT id FROM messages WHERE session_id = ? AND id >= ? ORDER BY id",
                        (session_id, first_id)).fetchall()
    return [row["id"] for row in rows]
