"""Per-persona memory settings as stored (table `cortex_persona_settings`; the defaults and
their checks: cortex/persona_settings.py)."""
import sqlite3
from typing import Any

from .clock import utc_now


def read_persona_settings(conn: sqlite3.Connection, persona_id: str) -> dict[str, Any] | None:
    """The persona's stored row (`sleep_enabled` as a bool), or None when it has none."""
    row = conn.execute("SELECT memory_review, sleep_enabled, sleep_sessions, sleep_hours "
                       "FROM cortex_persona_settings WHERE persona_id = ?",
                       (persona_id,)).fetchone()
    return None if row is None else {**dict(row), "sleep_enabled": bool(row["sleep_enabled"])}


def write_persona_settings(conn: sqlite3.Connection, persona_id: str,
                           settings: dict[str, Any]) -> None:
    """Stores all four settings of the persona (inserted or replaced)."""
    conn.execute(
        "INSERT INTO cortex_persona_settings (persona_id, memory_review, sleep_enabled, "
        "sleep_sessions, sleep_hours, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(persona_id) DO UPDATE SET memory_review = excluded.memory_review, "
        "sleep_enabled = excluded.sleep_enabled, sleep_sessions = excluded.sleep_sessions, "
        "sleep_hours = excluded.sleep_hours, updated_at = excluded.updated_at",
        (persona_id, settings["memory_review"], int(settings["sleep_enabled"]),
         settings["sleep_sessions"], settings["sleep_hours"], utc_now()))
