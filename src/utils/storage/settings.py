"""Key/value settings stored as JSON in the `settings` table."""
import json
import sqlite3
from typing import Any

from ..text import scrub_json


def get_setting(conn: sqlite3.Connection, key: str, default: Any = None) -> Any:
    """The stored value for `key`, or `default`; a lone surrogate stored by an older version
    (JSON's `\\ud800` escape) reads as U+FFFD, so it cannot break a prompt or a response."""
    text = get_setting_text(conn, key)
    return default if text is None else decode_setting(text)


def get_setting_text(conn: sqlite3.Connection, key: str) -> str | None:
    """The stored JSON text of `key` as it is, or None: a cheap key for what was decoded from
    it (the same text always decodes the same)."""
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else row["value"]


def get_setting_texts(conn: sqlite3.Connection, keys: tuple[str, ...]) -> dict[str, str]:
    """The stored JSON texts of those of `keys` that are set, in one read."""
    marks = ",".join("?" * len(keys))
    return {row["key"]: row["value"] for row in conn.execute(
        f"SELECT key, value FROM settings WHERE key IN ({marks})", keys)}


def decode_setting(text: str) -> Any:
    """A stored JSON text as `get_setting` reads it."""
    return scrub_json(json.loads(text))


def set_setting(conn: sqlite3.Connection, key: str, value: Any) -> None:
    """Stores `value` (JSON-serialisable) under `key`."""
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, "
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT(key) DO UPDATE SET "
        "value = excluded.value, updated_at = excluded.updated_at",
        (key, json.dumps(value)),
    )
