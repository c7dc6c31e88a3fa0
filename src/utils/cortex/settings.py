"""The cortex settings (settings key "cortex"): on/off, update frequency and idle trigger.

The model with its defaults and bounds is `models.settings.CortexSettings`; the store is
`storage/settings_store.py`. These two functions keep the dict the callers read.
"""
import sqlite3

from ..storage import settings_store

SETTINGS_KEY = settings_store.CORTEX


def load_cortex_settings(conn: sqlite3.Connection) -> dict:
    """The stored settings over the defaults (unknown or invalid stored values are ignored)."""
    return settings_store.cortex_settings(conn).model_dump()


def save_cortex_settings(conn: sqlite3.Connection, changes) -> dict:
    """Validates `changes` (any subset of the fields), stores the merged settings, returns them
    (a bad field is `models.Invalid`: 400 `invalid_setting`)."""
    return settings_store.save_cortex_settings(conn, changes).model_dump()
