"""Persona avatars (table `persona_avatars`, migration 0010): re-encoded image bytes."""
import sqlite3

from .clock import utc_now


def get_avatar(conn: sqlite3.Connection, persona_id: str) -> dict | None:
    """`{mime, data, sha256, width, height, updated_at}` or None."""
    row = conn.execute("SELECT mime, data, sha256, width, height, updated_at "
                       "FROM persona_avatars WHERE persona_id = ?", (persona_id,)).fetchone()
    return dict(row) if row else None


def put_avatar(conn: sqlite3.Connection, persona_id: str, image: dict) -> None:
    """Sets (or replaces) the persona's avatar."""
    conn.execute(
        "INSERT INTO persona_avatars (persona_id, mime, data, sha256, width, height, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(persona_id) DO UPDATE SET mime = excluded.mime,"
        " data = excluded.data, sha256 = excluded.sha256, width = excluded.width, "
        "height = excluded.height, updated_at = excluded.updated_at",
        (persona_id, image["mime"], image["data"], image["sha256"], image["width"],
         image["height"], utc_now()))


def delete_avatar(conn: sqlite3.Connection, persona_id: str) -> bool:
    """Removes the avatar; True if there was one."""
    return conn.execute("DELETE FROM persona_avatars WHERE persona_id = ?",
                        (persona_id,)).rowcount == 1
