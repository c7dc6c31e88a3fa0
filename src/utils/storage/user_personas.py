"""User personas, "About you" (migration 0041): who the person is in a conversation.

At most one row is the default (`is_default`); a session's `user_persona_id` names the one it
uses, NULL meaning it follows the default. `avatar_url` is derived from the avatar row, versioned
by its hash like a persona's.
"""
import sqlite3

from ..models.user_personas import UserPersona
from .clock import utc_now

_SELECT = ("SELECT u.id, u.name, u.description, u.is_default, u.created_at, u.updated_at, "
           "(SELECT sha256 FROM user_persona_avatars a WHERE a.user_persona_id = u.id) AS avatar "
           "FROM user_personas u")


def _shown(row: sqlite3.Row) -> UserPersona:
    item = dict(row)
    avatar = item.pop("avatar")
    item["is_default"] = bool(item["is_default"])
    item["avatar_url"] = (f"/api/user-personas/{item['id']}/avatar?v={avatar[:12]}"
                          if avatar else None)
    return UserPersona.model_validate(item)


def list_all(conn: sqlite3.Connection) -> list[UserPersona]:
    """Every user persona, the default first, then by creation."""
    rows = conn.execute(f"{_SELECT} ORDER BY u.is_default DESC, u.id").fetchall()
    return [_shown(row) for row in rows]


def count(conn: sqlite3.Connection, *, other_than: int | None = None) -> int:
    """How many user personas there are (besides `other_than`, when given)."""
    if other_than is None:
        return conn.execute("SELECT COUNT(*) FROM user_personas").fetchone()[0]
    return conn.execute("SELECT COUNT(*) FROM user_personas WHERE id <> ?",
                        (other_than,)).fetchone()[0]


def get(conn: sqlite3.Connection, user_persona_id: int) -> UserPersona | None:
    """The user persona, or None."""
    row = conn.execute(f"{_SELECT} WHERE u.id = ?", (user_persona_id,)).fetchone()
    return _shown(row) if row else None


def get_default(conn: sqlite3.Connection) -> UserPersona | None:
    """The default user persona, or None (there is none yet)."""
    row = conn.execute(f"{_SELECT} WHERE u.is_default = 1").fetchone()
    return _shown(row) if row else None


def create(conn: sqlite3.Connection, name: str, description: str, is_default: bool) -> int:
    """Inserts a user persona (call inside a transaction when `is_default` moves the default)."""
    now = utc_now()
    if is_default:
        conn.execute("UPDATE user_personas SET is_default = 0 WHERE is_default = 1")
    cursor = conn.execute(
        "INSERT INTO user_personas (name, description, is_default, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?)", (name, description, int(is_default), now, now))
    return int(cursor.lastrowid or 0)


def update(conn: sqlite3.Connection, user_persona_id: int, fields: dict) -> bool:
    """Sets `name` and/or `description`; False when there is no such row."""
    columns = [name for name in ("name", "description") if name in fields]
    sets = "".join(f"{name} = ?, " for name in columns)
    return conn.execute(f"UPDATE user_personas SET {sets}updated_at = ? WHERE id = ?",
                        (*[fields[name] for name in columns], utc_now(),
                         user_persona_id)).rowcount == 1


def make_default(conn: sqlite3.Connection, user_persona_id: int) -> None:
    """Moves the default to `user_persona_id` (inside a transaction)."""
    conn.execute("UPDATE user_personas SET is_default = 0 WHERE is_default = 1")
    conn.execute("UPDATE user_personas SET is_default = 1 WHERE id = ?", (user_persona_id,))


def delete(conn: sqlite3.Connection, user_persona_id: int) -> bool:
    """Deletes the row; its sessions fall back to NULL (follow the default), its avatar goes."""
    return conn.execute("DELETE FROM user_personas WHERE id = ?",
                        (user_persona_id,)).rowcount == 1


def of_session(conn: sqlite3.Connection, session_id: str) -> UserPersona | None:
    """The user persona a session uses: its own choice if set, else the default (None: none)."""
    row = conn.execute("SELECT user_persona_id FROM sessions WHERE id = ?",
                       (session_id,)).fetchone()
    return chosen_or_default(conn, row[0] if row else None)


def chosen_or_default(conn: sqlite3.Connection,
                      user_persona_id: int | None) -> UserPersona | None:
    """The user persona `user_persona_id` (a session's `user_persona_id`, already read) if it
    still exists, else the default (None: none)."""
    chosen = get(conn, user_persona_id) if user_persona_id is not None else None
    return chosen or get_default(conn)


def chosen_or(conn: sqlite3.Connection, user_persona_id: int | None,
              default: UserPersona | None) -> UserPersona | None:
    """`chosen_or_default` with the default already read (`default`: a chat turn reads it
    once, with the settings)."""
    chosen = get(conn, user_persona_id) if user_persona_id is not None else None
    return chosen or default


def set_for_session(conn: sqlite3.Connection, session_id: str,
                    user_persona_id: int | None) -> bool:
    """Sets the user persona a session uses (None: the default); False: no such session."""
    return conn.execute("UPDATE sessions SET user_persona_id = ? WHERE id = ?",
                        (user_persona_id, session_id)).rowcount == 1
