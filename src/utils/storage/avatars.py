"""Avatars as stored: re-encoded image bytes, one row an owner.

Personas keep theirs in `persona_avatars` (migration 0010), user personas in
`user_persona_avatars` (migration 0041); the two tables have the same columns but the owner's,
so one set of functions serves both (`owner` names the table and its key column).
"""
import sqlite3
from typing import Any, NamedTuple

from .clock import utc_now


class Owner(NamedTuple):
    """Which avatar table, keyed by which column (constants below, never user input)."""

    table: str
    key: str


PERSONA = Owner("persona_avatars", "persona_id")
USER_PERSONA = Owner("user_persona_avatars", "user_persona_id")


def get_avatar(conn: sqlite3.Connection, owner_id: str | int,
               owner: Owner = PERSONA) -> dict[str, Any] | None:
    """`{mime, data, sha256, width, height, updated_at}` or None."""
    row = conn.execute(f"SELECT mime, data, sha256, width, height, updated_at "
                       f"FROM {owner.table} WHERE {owner.key} = ?", (owner_id,)).fetchone()
    return dict(row) if row else None


def put_avatar(conn: sqlite3.Connection, owner_id: str | int, image: dict[str, Any],
               owner: Owner = PERSONA) -> None:
    """Sets (or replaces) the owner's avatar."""
    conn.execute(
        f"INSERT INTO {owner.table} ({owner.key}, mime, data, sha256, width, height, updated_at) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT({owner.key}) DO UPDATE SET "
        "mime = excluded.mime, data = excluded.data, sha256 = excluded.sha256, "
        "width = excluded.width, height = excluded.height, updated_at = excluded.updated_at",
        (owner_id, image["mime"], image["data"], image["sha256"], image["width"],
         image["height"], utc_now()))


def delete_avatar(conn: sqlite3.Connection, owner_id: str | int, owner: Owner = PERSONA) -> bool:
    """Removes the avatar; True if there was one."""
    return conn.execute(f"DELETE FROM {owner.table} WHERE {owner.key} = ?",
                        (owner_id,)).rowcount == 1
