"""Personas: validated CRUD over SQLite, with each persona's cortex created and removed alongside.

The default persona ships in `src/instructions/personas/default.json` (English and German) and is
seeded as id 'default' at start-up; it can be edited but never deleted.
"""
import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from ..cortex import CortexService
from ..models import parse
from ..models.personas import Persona, PersonaCreate, PersonaPatch
from ..storage import Database, deletions, personas as store
from .errors import ServiceError, not_found
from .ids import DEFAULT_PERSONA_ID, is_persona_id, new_id
from .persona_cleanup import PersonaCleanup

log = logging.getLogger(__name__)
DEFAULT_PERSONA_FILE = (Path(__file__).resolve().parents[2]
                        / "instructions" / "personas" / "default.json")

ID_LENGTH = 12
READ_ONLY = ("id", "created_at", "updated_at", "avatar_url")


class PersonaService:
    """Creates, reads, updates and deletes personas; keeps their cortex directories in step."""

    def __init__(self, db: Database, cortex_service: CortexService, cleanup: PersonaCleanup,
                 default_file: Path = DEFAULT_PERSONA_FILE,
                 ring: Callable[[], None] = lambda: None):
        self._db = db
        self._cortex = cortex_service
        self._cleanup = cleanup
        self._default_file = default_file
        self._ring = ring  # tells the processes generating replies that rows went

    def list(self) -> list[Persona]:
        """All personas, the default one first."""
        return store.list_personas(self._db.conn())

    def get(self, persona_id: str) -> Persona:
        """One persona; 404 when unknown."""
        persona = None
        if is_persona_id(persona_id):
            persona = store.get_persona(self._db.conn(), persona_id)
        if persona is None:
            raise not_found("persona", persona_id)
        return persona

    def create(self, data: dict) -> Persona:
        """Validates `data`, stores the persona under a new random id and creates its cortex."""
        fields = self._validate(data, creating=True)
        for _ in range(5):
            persona_id = new_id(ID_LENGTH)
            try:
                persona = store.create_persona(self._db.conn(), persona_id, fields)
                break
            except sqlite3.IntegrityError:
                continue
        else:
            raise RuntimeError("could not find a free persona id")
        try:
            self._cortex.ensure_cortex_files(persona_id)
        except BaseException:
            store.delete_persona(self._db.conn(), persona_id)
            raise
        log.info("Created persona %s", persona_id)
        return persona

    def update(self, persona_id: str, data: dict) -> Persona:
        """Changes the given fields (read-only ones are ignored); 404 when unknown."""
        self.get(persona_id)
        changes = self._validate(data, creating=False)
        persona = store.update_persona(self._db.conn(), persona_id, changes)
        if persona is None:
            raise not_found("persona", persona_id)
        return persona

    def delete(self, persona_id: str) -> None:
        """Deletes a persona with its sessions, messages and cortex; 'default' is refused (409).

        The row goes with a tombstone in one transaction (from then on nothing can recreate the
        cortex), then the files under the persona's lock; a crash in between is completed at
        start-up (see persona_cleanup)."""
        if persona_id == DEFAULT_PERSONA_ID:
            raise ServiceError(409, "default_persona", "The default persona cannot be deleted.")
        self.get(persona_id)
        with self._db.transaction():
            if not store.delete_persona(self._db.conn(), persona_id):
                raise not_found("persona", persona_id)
            deletions.record(self._db.conn(), persona_id)
        self._ring()  # the replies of its sessions stop now (their rows are gone)
        self._cleanup.purge(persona_id)
        log.info("Deleted persona %s", persona_id)

    def ensure_default(self, language: str = "en") -> bool:
        """Seeds the shipped default persona (in `language`) if it is missing; True if seeded."""
        fields = self.default_fields(language)
        inserted = store.insert_persona_if_missing(self._db.conn(), DEFAULT_PERSONA_ID, fields)
        self._cortex.ensure_cortex_files(DEFAULT_PERSONA_ID)
        if inserted:
            log.info("Seeded the default persona (%s)", fields["language"])
        return inserted

    def default_fields(self, language: str = "en") -> dict:
        """The shipped default persona's fields in `language` (English when unknown)."""
        variants = json.loads(self._default_file.read_text(encoding="utf-8"))
        language = language if language in variants else "en"
        variant = variants[language]
        return {"name": variant["name"], "description": variant["description"],
                "greeting": variant["greeting"], "user_name": "", "language": language}

    def _validate(self, data: dict, *, creating: bool) -> dict:
        given = parse(PersonaCreate if creating else PersonaPatch, data).given()
        return {name: value for name, value in given.items() if name not in READ_ONLY}
