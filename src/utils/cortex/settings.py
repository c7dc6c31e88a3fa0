"""The cortex settings (settings key "cortex"): on/off, update frequency and idle trigger.

The model with its defaults and bounds is `models.settings.CortexSettings`; the store is
`storage/settings_store.py`. `load_cortex_settings` is what the cortex reads; the API
reads and writes them through `services/memory_settings.py`.
"""
import sqlite3

from ..models.settings import CortexSettings
from ..storage import settings_store

SETTINGS_KEY = settings_store.CORTEX


def load_cortex_settings(conn: sqlite3.Connection) -> CortexSettings:
    """The stored settings over the defaults (unknown or invalid stored values are ignored)."""
    return settings_store.cortex_settings(conn)

