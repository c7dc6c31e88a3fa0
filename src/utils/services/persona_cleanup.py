"""What a persona deletion leaves nowhere: finishing deletes, and start-up cleanup after crashes.

A deletion writes a tombstone in the transaction that deletes the persona row (so every read and
write from then on answers 404 and creates nothing), then removes the cortex directory, revisions
and lock file under the persona's lock, then the tombstone. At start-up, tombstones a crash left
are completed, and anything of a persona without a row is removed: its cortex directory, revision
rows and lock file. The database knew such a persona (a tombstone or revisions), so it was
deleted. A directory the database never heard of (copied in by hand, or left from a lost
database) is moved to `DATA_DIR/quarantine/` and reported instead, so no unknown data is
destroyed without a trace.
"""
import logging
import os
import re

from ..cortex import CortexService
from ..cortex.paths import DEFAULT_PERSONA
from ..cortex.personas_lookup import persona_exists
from ..storage import Database, deletions
from ..storage.clock import utc_now

log = logging.getLogger(__name__)
_ID = re.compile(r"[a-z0-9]{8,32}", re.ASCII)


class PersonaCleanup:
    """Removes the cortex of deleted personas; completes and sweeps at start-up."""

    def __init__(self, db: Database, cortex: CortexService, data_dir: str):
        self._db = db
        self._cortex = cortex
        self._quarantine = os.path.join(data_dir, "quarantine")

    def purge(self, persona_id: str) -> None:
        """Removes files, revisions and lock file of a persona whose row is gone, then its
        tombstone; on an error the tombstone stays, so the next start-up finishes the job."""
        self._cortex.delete_cortex_dir(persona_id)
        with self._db.transaction():
            deletions.clear(self._db.conn(), persona_id)

    def recover(self) -> dict:
        """Completes half-done deletions and removes (or quarantines) orphans; returns counts."""
        counts = {"removed": 0, "quarantined": 0, "failed": 0}
        for persona_id in sorted(self._candidates()):
            try:
                outcome = self._settle(persona_id)
            except OSError:
                log.exception("Could not clean up the cortex of deleted persona %s", persona_id)
                outcome = "failed"
            if outcome:
                counts[outcome] += 1
        if counts["removed"] or counts["quarantined"] or counts["failed"]:
            log.warning("Start-up cleanup of deleted personas: %(removed)d removed, "
                        "%(quarantined)d quarantined, %(failed)d failed", counts)
        return counts

    def _candidates(self) -> set[str]:
        """Ids with a tombstone, orphaned revisions, a cortex directory or a lock file."""
        conn = self._db.conn()
        found = set(deletions.pending(conn)) | set(deletions.ids_with_orphaned_revisions(conn))
        custom = os.path.join(self._cortex.paths.root, "custom")
        found |= {name for name in _listdir(custom) if _ID.fullmatch(name)}
        found |= {name[:-5] for name in _listdir(self._cortex.paths.lock_dir)
                  if name.endswith(".lock") and _ID.fullmatch(name[:-5])}
        found.discard(DEFAULT_PERSONA)
        return {pid for pid in found if not persona_exists(conn, pid)}

    def _settle(self, persona_id: str) -> str | None:
        """Under the persona's lock: nothing if it exists, else remove (or quarantine) it all."""
        with self._cortex.lock(persona_id):
            conn = self._db.conn()
            if persona_exists(conn, persona_id):
                return None
            known = deletions.is_pending(conn, persona_id) or \
                persona_id in deletions.ids_with_orphaned_revisions(conn)
            directory = self._cortex.get_cortex_path(persona_id)
            outcome = "removed" if known or os.path.isdir(directory) else None
            if not known and os.path.isdir(directory):
                self._quarantine_dir(persona_id, directory)
                outcome = "quarantined"
            self.purge(persona_id)
            return outcome

    def _quarantine_dir(self, persona_id: str, directory: str) -> None:
        os.makedirs(self._quarantine, mode=0o700, exist_ok=True)
        stamp = re.sub(r"[^0-9TZ]", "", utc_now())
        target = os.path.join(self._quarantine, f"cortex-{persona_id}-{stamp}")
        os.rename(directory, target)
        log.warning("Moved the cortex directory of unknown persona %s to %s", persona_id, target)


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except FileNotFoundError:
        return []
