"""Whether a persona exists, asked of the shared `personas` table without the chat code."""
import sqlite3

from .paths import DEFAULT_PERSONA


def persona_exists(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True for `default` (always there) and for any id with a row in `personas`."""
    if persona_id == DEFAULT_PERSONA:
        return True
    return conn.execute("SELECT 1 FROM personas WHERE id = ?", (persona_id,)).fetchone() is not None
