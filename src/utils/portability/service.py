"""Character cards and avatars of personas: import (with preview), export, avatar upload.

An import is all or nothing: the file is parsed and checked completely in memory first, then the
persona row, its avatar and its cortex (files and first revisions) are created under the
persona's lock inside one SQLite transaction; if anything fails, the transaction rolls back and
the new cortex directory is removed, so no partial persona is ever visible.
"""
import json
import logging
import os
import re
import shutil
import sqlite3

from ..cooperative import offload
from ..cortex import CortexService
from ..cortex.atomic import atomic_write
from ..cortex.paths import CORTEX_FILES
from ..models.personas import Persona
from ..services import validation as check
from ..services.errors import ServiceError
from ..services.ids import new_id
from ..services.persona_service import ID_LENGTH, PersonaService
from ..storage import (
    Database,
    avatars as avatar_store,
    cortex_revisions as revision_store,
    personas as persona_store,
)
from . import books, card_files, cards, images, letta, png
from .archive_service import ArchiveService, Seed
from .uploads import Upload, read_upload

log = logging.getLogger(__name__)
FORMATS = {"png": "image/png", "json": "application/json", "charx": "application/zip",
           "archive": "application/zip"}
IMPORT_SUMMARY = {"af": "import: memory block from a Letta agent file"}
CARD_SUMMARY = "import: restored from a character card export"


class CardService:
    """Turns card files into personas and personas into card files; owns avatars."""

    def __init__(self, db: Database, cortex: CortexService, personas: PersonaService):
        self._db = db
        self._cortex = cortex
        self._personas = personas
        self._archives = ArchiveService(db, cortex, personas, self.create_with)

    def preview(self, data: bytes) -> dict:
        """What an import of `data` would create; nothing is stored."""
        upload = self._read(data)
        if upload.parsed is not None:
            return self._archives.preview(upload)
        card, fields, avatar = upload.card, upload.fields, upload.avatar
        assert card is not None, "an archive, not a card"
        clash = any(p.name == fields["name"] for p in self._personas.list())
        shown = dict(fields)
        avatar_url = images.data_url(avatar) if avatar else None
        return {"format": card["format"], "spec_version": card["version"],
                "persona": {**shown, "avatar_url": avatar_url},
                "includes_memories": card["cortex"] is not None,
                "name_clash": clash, "ignored": card["ignored"]}

    def import_card(self, data: bytes) -> Persona:
        """Creates a new persona (never overwrites one) from a card file; returns it."""
        upload = self._read(data)
        if upload.parsed is not None:
            return self._personas.get(self._archives.import_archive(upload))
        card, fields, avatar = upload.card, upload.fields, upload.avatar
        assert card is not None, "an archive, not a card"
        summary = IMPORT_SUMMARY.get(card["format"], CARD_SUMMARY)
        persona_id = self._create(fields, avatar, card["cortex"], summary)
        log.info("Imported a %s card as persona %s", card["format"], persona_id)
        return self._personas.get(persona_id)

    def export(self, persona_id: str, fmt: str, include_memories: bool) -> tuple[bytes, str, str]:
        """`(bytes, mime, filename)` of the persona as a card file."""
        check.choice("format", fmt, tuple(FORMATS))
        # a card file is built field by field from the persona as a mapping, its own book
        # merged into the open `card` object (cards.build, archive.read_rows): dumped here, once
        persona = books.with_book(self._db.conn(), self._personas.get(persona_id).model_dump())
        if fmt == "archive":
            return self._archives.export(persona, include_memories), FORMATS[fmt], \
                f"{_slug(persona['name'])}.persona.zip"
        cortex = self._cortex_export(persona_id) if include_memories else None
        avatar = avatar_store.get_avatar(self._db.conn(), persona_id)
        body = offload(_card_file, fmt, persona, cortex, avatar)
        return body, FORMATS[fmt], f"{_slug(persona['name'])}.{fmt}"

    def avatar(self, persona_id: str) -> dict:
        """The stored avatar; 404 `avatar_not_found` when the persona has none."""
        self._personas.get(persona_id)
        avatar = avatar_store.get_avatar(self._db.conn(), persona_id)
        if avatar is None:
            raise ServiceError(404, "avatar_not_found", "This persona has no avatar.")
        return avatar

    def set_avatar(self, persona_id: str, data: bytes) -> Persona:
        """Re-encodes and stores an uploaded picture; returns the persona."""
        self._personas.get(persona_id)
        images.check_header(data)
        image = offload(images.reencode, data)
        with self._db.transaction() as conn:
            if persona_store.get_persona(conn, persona_id) is None:
                self._personas.get(persona_id)
            avatar_store.put_avatar(conn, persona_id, image)
        return self._personas.get(persona_id)

    def delete_avatar(self, persona_id: str) -> Persona:
        """Removes the avatar (no error if there was none); returns the persona."""
        self._personas.get(persona_id)
        with self._db.transaction() as conn:
            avatar_store.delete_avatar(conn, persona_id)
        return self._personas.get(persona_id)

    def agent_file(self, persona_id: str) -> tuple[bytes, str]:
        """`(json bytes, filename)` of the Letta-style `.af` export of the persona's cortex."""
        persona = self._personas.get(persona_id)
        document = letta.agent_file(persona, self._cortex_export(persona_id), self._cortex.budget)
        return _json_bytes(document), f"{_slug(persona.name)}.af"

    def _read(self, data: bytes) -> Upload:
        """The upload parsed and checked, off the event loop (PNG chunks, zip directories and
        the picture's decode are CPU work; nothing here touches storage). A PNG card is its
        own picture: its declared size is judged first, so a bomb never waits for a turn."""
        if png.is_png(data):
            images.check_header(data)
        return offload(read_upload, data, self._cortex.hard_cap)

    def _create(self, fields: dict, avatar: dict | None, cortex: dict | None,
                summary: str) -> str:
        def seed(conn: sqlite3.Connection, persona_id: str, directory: str) -> None:
            if cortex:
                self._seed_cortex(conn, persona_id, directory, cortex, summary)
        return self.create_with(fields, avatar, seed)

    def create_with(self, fields: dict, avatar: dict | None, seed: Seed) -> str:
        """A new persona with its avatar; `seed(conn, persona_id, cortex_dir)` adds the rest in
        the same transaction. All or nothing: on any failure no row, file or lock file is left."""
        persona_id = new_id(ID_LENGTH)
        directory = self._cortex.get_cortex_path(persona_id)
        fields, book = books.split(fields)
        try:
            with self._cortex.lock(persona_id), self._db.transaction() as conn:
                persona_store.create_persona(conn, persona_id, fields)
                if book is not None:
                    books.store_own(conn, persona_id, book)
                if avatar:
                    avatar_store.put_avatar(conn, persona_id, avatar)
                seed(conn, persona_id, directory)
                self._cortex.ensure_cortex_files(persona_id)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            _remove_quietly(os.path.join(self._cortex.paths.lock_dir, f"{persona_id}.lock"))
            raise
        return persona_id

    def _seed_cortex(self, conn: sqlite3.Connection, persona_id: str, directory: str, cortex: dict,
                     summary: str) -> None:
        """The imported files as each file's first revision (author `template`, noted `import`)."""
        os.makedirs(directory, exist_ok=True)
        for filename in CORTEX_FILES:
            if filename in cortex:
                revision_store.insert_revision(conn, persona_id, filename, "template",
                                               cortex[filename], summary=summary)
                atomic_write(os.path.join(directory, filename), cortex[filename].encode("utf-8"))

    def _cortex_export(self, persona_id: str) -> dict:
        return {info.filename: {"content": info.content, "revision": info.revision}
                for info in self._cortex.read_all_info(persona_id)}


def _card_file(fmt: str, persona: dict, cortex: dict | None, avatar: dict | None) -> bytes:
    """The card file's bytes (JSON, CHARX zip or PNG with its picture converted): pure CPU work,
    run off the event loop."""
    v3 = cards.build(persona, cortex=cortex)
    if fmt == "json":
        return card_files.json_card(v3, avatar)
    if fmt == "charx":
        return card_files.charx(v3, avatar)
    image = images.to_png(avatar["data"]) if avatar else images.placeholder(persona["name"])
    return card_files.png_card(image, v3, cards.build(persona, cortex=cortex, version=2))


def _remove_quietly(path: str) -> None:
    """Removes the lock file of a persona that never came to be (nobody else knows its id)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _json_bytes(document: dict) -> bytes:
    return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "persona"
