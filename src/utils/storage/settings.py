"""Key/value settings stored as JSON in the `settings` table."""
import json
import sqlite3
from typing import Any

from ..text import scrub_json


def get_setting(conn: sqlite3.Connection, key: str, default: Any = None) -> Any:
    """The stored value for `key`, or `default`; a lone surrogate stored by an older version
    (JSON's `\\ud800` escape) reads as U+FFFD, so it cannot break a prompt or a response."""
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return default if row is None else scrub_json(json.loads(row["value"]))


def set_setting(conn: sqlite3.Connection, key: str, value: Any) -> None:
    """Stores `value` (JSON-serialisable) under `key`."""
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, "
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT(key) DO UPDATE SET "
        "value = excluded.value, updated_at = excluded.updated_at",
        (key, json.dumps(value)),
    )
