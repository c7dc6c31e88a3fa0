"""The cortex settings (settings key "cortex"): on/off, update frequency and idle trigger."""
import sqlite3

from ..limits import IDLE_MINUTES
from ..storage.settings import get_setting, set_setting

SETTINGS_KEY = "cortex"
FREQUENCIES = ("frequent", "medium", "rare")
IDLE_MINUTES_RANGE = IDLE_MINUTES
DEFAULT_SETTINGS = {"enabled": True, "frequency": "medium", "idle_minutes": 30}


class InvalidSetting(ValueError):
    """A cortex setting has the wrong type or value; `field` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def load_cortex_settings(conn: sqlite3.Connection) -> dict:
    """The stored settings over the defaults (unknown or invalid stored values are ignored)."""
    stored = get_setting(conn, SETTINGS_KEY, {})
    settings = dict(DEFAULT_SETTINGS)
    if isinstance(stored, dict):
        for field, value in stored.items():
            try:
                settings[field] = _validated(field, value)
            except InvalidSetting:
                continue
    return settings


def save_cortex_settings(conn: sqlite3.Connection, changes) -> dict:
    """Validates `changes` (any subset of the fields), stores the merged settings, returns them."""
    if not isinstance(changes, dict):
        raise InvalidSetting("", "The cortex settings must be a JSON object.")
    validated = {field: _validated(field, value) for field, value in changes.items()}
    settings = {**load_cortex_settings(conn), **validated}
    set_setting(conn, SETTINGS_KEY, settings)
    return settings


def _validated(field: str, value):
    if field == "enabled":
        if not isinstance(value, bool):
            raise InvalidSetting(field, "enabled must be true or false.")
    elif field == "frequency":
        if value not in FREQUENCIES:
            raise InvalidSetting(field, f"frequency must be one of {', '.join(FREQUENCIES)}.")
    elif field == "idle_minutes":
        low, high = IDLE_MINUTES_RANGE
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidSetting(field,
                                 f"idle_minutes must be a whole number from {low} to {high}.")
    else:
        raise InvalidSetting(field, f"Unknown cortex setting {field[:40]!r}; the settings are "
                                    f"enabled, frequency and idle_minutes.")
    return value
