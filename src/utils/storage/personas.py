"""Persona rows: the character a person chats with (its cortex lives on disk, see utils/cortex).

List and object fields (`alternate_greetings`, `tags`, `extensions`, `card`) are JSON text in
SQLite and plain lists and dicts in the `Persona` model the reads return (validated once per
row, docs/development.md "Typed resources"). `avatar_url` is derived from the avatar row,
versioned by its hash so a browser never shows a stale picture.
"""
import json
import sqlite3
from typing import Any, get_args

from ..models.personas import Persona
from ..models.settings import Language
from .clock import utc_now

TEXT_FIELDS = ("name", "description", "user_name", "language", "greeting", "personality",
               "scenario", "example_dialogue", "creator_notes", "system_prompt",
               "post_history_instructions")
JSON_FIELDS = {"alternate_greetings": list, "tags": list, "extensions": dict, "card": dict}
FIELDS = (*TEXT_FIELDS, *JSON_FIELDS, "use_card_prompts", "model")
_COLUMNS = f"id, {', '.join(FIELDS)}, created_at, updated_at"
_SELECT = (f"SELECT personas.id, {', '.join(FIELDS)}, created_at, updated_at, "
           "(SELECT sha256 FROM persona_avatars a WHERE a.persona_id = personas.id) AS avatar "
           "FROM personas")
_MARKS = ", ".join("?" * (len(FIELDS) + 3))


def create_persona(conn: sqlite3.Connection, persona_id: str,
                   fields: dict[str, Any]) -> Persona:
    """Inserts a persona; raises sqlite3.IntegrityError when the id is taken."""
    conn.execute(f"INSERT INTO personas ({_COLUMNS}) VALUES ({_MARKS})",
                 _row_values(persona_id, fields))
    created = get_persona(conn, persona_id)
    assert created is not None  # inserted just above
    return created


def insert_persona_if_missing(conn: sqlite3.Connection, persona_id: str,
                              fields: dict[str, Any]) -> bool:
    """Inserts a persona unless one with that id exists; True when it was inserted now."""
    cursor = conn.execute(f"INSERT OR IGNORE INTO personas ({_COLUMNS}) VALUES ({_MARKS})",
                          _row_values(persona_id, fields))
    return cursor.rowcount == 1


def get_persona(conn: sqlite3.Connection, persona_id: str) -> Persona | None:
    """The persona with `persona_id`, or None."""
    row = conn.execute(f"{_SELECT} WHERE personas.id = ?", (persona_id,)).fetchone()
    return _decode(row) if row else None


def list_personas(conn: sqlite3.Connection) -> list[Persona]:
    """All personas: the default one first, then in the order they were created."""
    rows = conn.execute(
        f"{_SELECT} ORDER BY personas.id = 'default' DESC, created_at, personas.rowid"
    ).fetchall()
    return [_decode(row) for row in rows]


def persona_ids(conn: sqlite3.Connection) -> list[str]:
    """The ids of every persona row, in id order."""
    return [row[0] for row in conn.execute("SELECT id FROM personas ORDER BY id").fetchall()]


def has_persona(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True when a row of `personas` has this id."""
    return conn.execute("SELECT 1 FROM personas WHERE id = ?", (persona_id,)).fetchone() is not None


def update_persona(conn: sqlite3.Connection, persona_id: str,
                   changes: dict[str, Any]) -> Persona | None:
    """Sets the given fields (a subset of FIELDS); returns the persona, or None if unknown."""
    names = [name for name in FIELDS if name in changes]
    assignments = "".join(f"{name} = ?, " for name in names)
    cursor = conn.execute(
        f"UPDATE personas SET {assignments}updated_at = ? WHERE id = ?",
        (*(_encode(name, changes[name]) for name in names), utc_now(), persona_id),
    )
    return get_persona(conn, persona_id) if cursor.rowcount else None


def delete_persona(conn: sqlite3.Connection, persona_id: str) -> bool:
    """Deletes a persona; its sessions and messages go with it (ON DELETE CASCADE)."""
    return conn.execute("DELETE FROM personas WHERE id = ?", (persona_id,)).rowcount == 1


def _row_values(persona_id: str, fields: dict[str, Any]) -> tuple[Any, ...]:
    now = utc_now()
    values = {name: fields.get(name) or "" for name in TEXT_FIELDS}
    values["language"] = values["language"] or "en"
    for name, kind in JSON_FIELDS.items():
        values[name] = _encode(name, fields.get(name) or kind())
    values["use_card_prompts"] = 0 if fields.get("use_card_prompts") is False else 1
    values["model"] = fields.get("model") or None
    return (persona_id, *(values[name] for name in FIELDS), now, now)


_LANGUAGES = get_args(Language)


def _encode(name: str, value: Any) -> Any:
    if name in JSON_FIELDS:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if name == "use_card_prompts":
        return 1 if value else 0
    return value


def _decode(row: sqlite3.Row) -> Persona:
    persona = dict(row)
    for name in JSON_FIELDS:
        persona[name] = json.loads(persona[name])
    persona["use_card_prompts"] = bool(persona["use_card_prompts"])
    if persona["language"] not in _LANGUAGES:  # written by another tool: read as the default
        persona["language"] = "en"
    avatar = persona.pop("avatar")
    persona["avatar_url"] = (f"/api/personas/{persona['id']}/avatar?v={avatar[:12]}"
                             if avatar else None)
    return Persona.model_validate(persona)
