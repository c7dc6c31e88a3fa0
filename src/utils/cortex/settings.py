"""The cortex settings (settings key "cortex"): on/off, update frequency and idle trigger.

The model with its defaults and bounds is `models.settings.CortexSettings`; the store is
`storage/settings_store.py`. `load_cortex_settings` keeps the dict the cortex reads; the API
reads and writes them through `services/memory_settings.py`.
"""
import sqlite3
from typing import Any

from ..storage import settings_store

SETTINGS_KEY = settings_store.CORTEX


def load_cortex_settings(conn: sqlite3.Connection) -> dict[str, Any]:
    """The stored settings over the defaults (unknown or invalid stored values are ignored)."""
    return settings_store.cortex_values(conn)

