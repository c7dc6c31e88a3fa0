"""Per-persona memory settings (table `cortex_persona_settings`): review mode and sleep schedule.

`memory_review` is `auto` (an update changes the files) or `review` (it becomes a proposal the
person accepts or rejects). The sleep schedule consolidates after `sleep_sessions` new sessions
once at least `sleep_hours` have passed since the last consolidation.
"""
import sqlite3
from typing import Any

from ..storage import settings_store


def load_persona_settings(conn: sqlite3.Connection, persona_id: str) -> dict[str, Any]:
    """The persona's stored settings over the defaults."""
    return settings_store.persona_settings(conn, persona_id).model_dump()


def review_mode(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True when the persona's updates become proposals instead of changing the files."""
    return settings_store.persona_settings(conn, persona_id).memory_review == "review"

