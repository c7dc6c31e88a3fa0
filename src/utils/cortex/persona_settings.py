"""Per-persona memory settings (table `cortex_persona_settings`): review mode and sleep schedule.

`memory_review` is `auto` (an update changes the files) or `review` (it becomes a proposal the
person accepts or rejects). The sleep schedule consolidates after `sleep_sessions` new sessions
once at least `sleep_hours` have passed since the last consolidation.
"""
import sqlite3

from ..storage.db import transaction
from ..storage.persona_settings import read_persona_settings, write_persona_settings
from .settings import InvalidSetting

DEFAULTS = {"memory_review": "auto", "sleep_enabled": True, "sleep_sessions": 5,
            "sleep_hours": 24}
REVIEW_MODES = ("auto", "review")
_RANGES = {"sleep_sessions": (1, 1000), "sleep_hours": (1, 8760)}


def load_persona_settings(conn: sqlite3.Connection, persona_id: str) -> dict:
    """The persona's stored settings over the defaults."""
    return read_persona_settings(conn, persona_id) or dict(DEFAULTS)


def review_mode(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True when the persona's updates become proposals instead of changing the files."""
    return load_persona_settings(conn, persona_id)["memory_review"] == "review"


def save_persona_settings(conn: sqlite3.Connection, persona_id: str, changes) -> dict:
    """Validates `changes` (any subset), stores the merged settings and returns them."""
    if not isinstance(changes, dict):
        raise InvalidSetting("", "The persona's memory settings must be a JSON object.")
    validated = {field: _validated(field, value) for field, value in changes.items()}
    with transaction(conn):
        settings = {**load_persona_settings(conn, persona_id), **validated}
        write_persona_settings(conn, persona_id, settings)
    return settings


def _validated(field: str, value):
    if field == "memory_review":
        if value not in REVIEW_MODES:
            raise InvalidSetting(field, 'memory_review must be "auto" or "review".')
    elif field == "sleep_enabled":
        if not isinstance(value, bool):
            raise InvalidSetting(field, "sleep_enabled must be true or false.")
    elif field in _RANGES:
        low, high = _RANGES[field]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidSetting(field, f"{field} must be a whole number from {low} to {high}.")
    else:
        raise InvalidSetting(field, f"Unknown setting {field[:40]!r}; the settings are "
                                    f"{', '.join(DEFAULTS)}.")
    return value
