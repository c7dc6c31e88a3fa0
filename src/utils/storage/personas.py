"""Persona rows: the character a person chats with (its cortex lives on disk, see utils/cortex)."""
import sqlite3

from .clock import utc_now

FIELDS = ("name", "description", "user_name", "language", "greeting")
_COLUMNS = "id, name, description, user_name, language, greeting, created_at, updated_at"
_MARKS = ", ".join("?" * 8)


def create_persona(conn: sqlite3.Connection, persona_id: str, fields: dict) -> dict:
    """Inserts a persona; raises sqlite3.IntegrityError when the id is taken."""
    conn.execute(f"INSERT INTO personas ({_COLUMNS}) VALUES ({_MARKS})",
                 _row_values(persona_id, fields))
    return get_persona(conn, persona_id)


def insert_persona_if_missing(conn: sqlite3.Connection, persona_id: str, fields: dict) -> bool:
    """Inserts a persona unless one with that id exists; True when it was inserted now."""
    cursor = conn.execute(f"INSERT OR IGNORE INTO personas ({_COLUMNS}) VALUES ({_MARKS})",
                          _row_values(persona_id, fields))
    return cursor.rowcount == 1


def get_persona(conn: sqlite3.Connection, persona_id: str) -> dict | None:
    """The persona with `persona_id`, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM personas WHERE id = ?", (persona_id,)).fetchone()
    return dict(row) if row else None


def list_personas(conn: sqlite3.Connection) -> list[dict]:
    """All personas: the default one first, then in the order they were created."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM personas "
        "ORDER BY id = 'default' DESC, created_at, rowid"
    ).fetchall()
    return [dict(row) for row in rows]


def update_persona(conn: sqlite3.Connection, persona_id: str, changes: dict) -> dict | None:
    """Sets the given fields (a subset of FIELDS); returns the persona, or None if unknown."""
    names = [name for name in FIELDS if name in changes]
    assignments = "".join(f"{name} = ?, " for name in names)
    cursor = conn.execute(
        f"UPDATE personas SET {assignments}updated_at = ? WHERE id = ?",
        (*(changes[name] for name in names), utc_now(), persona_id),
    )
    return get_persona(conn, persona_id) if cursor.rowcount else None


def delete_persona(conn: sqlite3.Connection, persona_id: str) -> bool:
    """Deletes a persona; its sessions and messages go with it (ON DELETE CASCADE)."""
    return conn.execute("DELETE FROM personas WHERE id = ?", (persona_id,)).rowcount == 1


def _row_values(persona_id: str, fields: dict) -> tuple:
    now = utc_now()
    values = {name: fields.get(name) or "" for name in FIELDS}
    values["language"] = values["language"] or "en"
    return (persona_id, *(values[name] for name in FIELDS), now, now)
