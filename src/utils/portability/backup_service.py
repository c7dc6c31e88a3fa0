"""Backups from inside the app (`GET /api/backup`) and from the command line."""
import logging
import tempfile

from ..cooperative import offload
from ..cortex import CortexService
from ..storage import Database, settings_store
from ..storage.personas import persona_ids
from .backup import write_backup

log = logging.getLogger(__name__)


class BackupService:
    """Writes whole-app backups of one data directory."""

    def __init__(self, data_dir: str, db: Database, cortex: CortexService):
        self._data_dir = data_dir
        self._db = db
        self._cortex = cortex

    def refresh(self) -> None:
        """Records cortex changes made on disk outside the app, so the snapshot has them."""
        ids = persona_ids(self._db.conn())
        for persona_id in ids:
            try:
                self._cortex.read_all_info(persona_id)
            except Exception:
                log.exception("Could not refresh the cortex of %s before a backup", persona_id)

    def to_bytes(self) -> bytes:
        """A backup without secrets, as bytes (built in a temporary file, off the event loop:
        the snapshot and the compression are seconds of work on a large database; the CLI
        streams large ones straight to disk)."""
        self.refresh()
        return offload(_backup_bytes, self._data_dir)

    @classmethod
    def for_data_dir(cls, data_dir: str) -> "BackupService":
        """A service for the command line, outside any app."""
        db = Database(f"{data_dir}/app.db")
        cortex = CortexService(data_dir, db, settings=lambda: settings_store.memory_run_settings(db.conn()))
        return cls(data_dir, db, cortex)


def _backup_bytes(data_dir: str) -> bytes:
    """The backup zip's bytes (its own SQLite connections, none of the app's)."""
    with tempfile.TemporaryFile() as handle:
        write_backup(data_dir, handle, include_secrets=False)
        handle.seek(0)
        return handle.read()
