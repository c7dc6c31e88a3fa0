"""Queries about the end of the active branch, for regenerate, edit last and delete last."""
import sqlite3

from ..models.sessions import Message
from .messages import get_message


def last_message(conn: sqlite3.Connection, session_id: str, role: str | None = None
                 ) -> Message | None:
    """The active branch's newest message (of `role`, when given), or None."""
    sql = "SELECT id FROM messages WHERE session_id = ? AND on_branch = 1"
    params: tuple[str, ...] = (session_id,)
    if role is not None:
        sql += " AND role = ?"
        params += (role,)
    row = conn.execute(sql + " ORDER BY id DESC LIMIT 1", params).fetchone()
    return get_message(conn, row["id"]) if row else None
