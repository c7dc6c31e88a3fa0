"""The memory settings the API reads and writes: the cortex's (key "cortex": on/off, update
frequency, idle trigger) and each persona's (review mode, sleep schedule).

Defaults, bounds and the merge over stored values live in one place (models/settings.py, read
and written by storage/settings_store.py); this service only gives routes a way to them that
does not pass through the database handle.
"""
from typing import Any

from ..models.settings import CortexSettings, PersonaMemorySettings
from ..storage import Database, settings_store


class MemorySettings:
    """Reads and validates the cortex settings and a persona's memory settings."""

    def __init__(self, db: Database):
        self._db = db

    def cortex(self) -> CortexSettings:
        """The cortex settings over their defaults."""
        return settings_store.cortex_settings(self._db.conn())

    def update_cortex(self, changes: dict[str, Any]) -> CortexSettings:
        """Applies any subset of the cortex settings (a bad field is a 400 and nothing is
        written) and returns them all."""
        return settings_store.save_cortex_settings(self._db.conn(), changes)

    def persona(self, persona_id: str) -> PersonaMemorySettings:
        """The persona's memory settings over their defaults (the caller checked it exists)."""
        return settings_store.persona_settings(self._db.conn(), persona_id)

    def update_persona(self, persona_id: str, changes: dict[str, Any]) -> PersonaMemorySettings:
        """Applies any subset of the persona's memory settings (all or nothing) and returns
        them all."""
        return settings_store.save_persona_settings(self._db.conn(), persona_id, changes)
