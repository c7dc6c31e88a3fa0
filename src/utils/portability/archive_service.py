"""One-persona archives in and out, built on CardService's checks and its all-or-nothing create."""
import logging
import os
import sqlite3
from collections.abc import Callable

from ..cooperative import offload
from ..cortex import CortexService
from ..cortex.atomic import atomic_write
from ..services.errors import ServiceError
from ..services.ids import new_id
from ..services.persona_service import PersonaService
from ..storage import Database, persona_rows
from . import archive, images
from .uploads import Upload

# Adds what a new persona brings along (its history, its cortex files) inside the
# transaction that creates it: `seed(conn, persona_id, cortex_dir)`.
Seed = Callable[[sqlite3.Connection, str, str], None]
# CardService.create_with: a new persona from its fields, avatar and seed; its id.
CreateWith = Callable[[dict, "dict | None", Seed], str]

log = logging.getLogger(__name__)
SESSION_ID_LENGTH = 16


class ArchiveService:
    """Exports a persona with its history; imports one as a new persona (new ids everywhere)."""

    def __init__(self, db: Database, cortex: CortexService, personas: PersonaService,
                 create_with: CreateWith):
        self._db = db
        self._cortex = cortex
        self._personas = personas
        self._create_with = create_with

    def export(self, persona: dict, include_memories: bool) -> bytes:
        """The archive; it holds the memories, so the caller must have asked for them."""
        if not include_memories:
            raise ServiceError(400, "validation_error", "include_memories: an archive holds the "
                               "persona's memories and history; ask with include_memories=1",
                               field="include_memories")
        with self._cortex.lock(persona["id"]), self._db.transaction(immediate=False) as conn:
            rows = archive.read_rows(conn, persona)
        return offload(archive.pack, rows)  # seconds of deflate for a long history

    def preview(self, upload: Upload) -> dict:
        """What importing the read archive would create; nothing is stored."""
        parsed, fields, avatar = upload.parsed, upload.fields, upload.avatar
        assert parsed is not None, "a card, not an archive"
        clash = any(p.name == fields["name"] for p in self._personas.list())
        url = images.data_url(avatar) if avatar else None
        return {"format": "archive", "spec_version": None,
                "persona": {**fields, "avatar_url": url}, "includes_memories": True,
                "name_clash": clash, "sessions": len(parsed["sessions"]),
                "messages": len(parsed["messages"]), "ignored": []}

    def import_archive(self, upload: Upload) -> str:
        """Creates the persona with its sessions, messages and cortex history from the read
        archive (`uploads.read_archive`); returns its id."""
        parsed, fields, avatar = upload.parsed, upload.fields, upload.avatar
        assert parsed is not None, "a card, not an archive"

        def seed(conn: sqlite3.Connection, persona_id: str, directory: str) -> None:
            latest = persona_rows.insert_history(conn, persona_id, parsed,
                                                 lambda: new_id(SESSION_ID_LENGTH))
            os.makedirs(directory, exist_ok=True)
            for filename, content in latest.items():
                atomic_write(os.path.join(directory, filename), content.encode("utf-8"))
        persona_id = self._create_with(fields, avatar, seed)
        log.info("Imported a persona archive as %s (%d sessions, %d messages)", persona_id,
                 len(parsed["sessions"]), len(parsed["messages"]))
        return persona_id
