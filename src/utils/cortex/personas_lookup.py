"""Whether a persona exists, asked of the shared `personas` table without the chat code."""
import sqlite3

from ..storage.personas import has_persona
from .paths import DEFAULT_PERSONA


def persona_exists(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True for `default` (always there) and for any id with a row in `personas`."""
    if persona_id == DEFAULT_PERSONA:
        return True
    return has_persona(conn, persona_id)
