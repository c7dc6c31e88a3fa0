"""CortexService: each persona's memory.md, soul.md and relationship.md, durable and versioned.

Every operation on a file runs under the persona's lock (threads and processes) and starts by
reconciling disk and database (`_current`): a killed writer's pending revision is settled, a
missing file is recreated (template, or its last revision), and a file changed on disk outside
the app is recorded as an `external` revision, so nothing on disk is ever overwritten unrecorded.
A file whose stat and revision rows are as last seen is not read again (see `snapshots.py`).
Before anything else, under the lock, the persona must still exist (the `exists` check the app
wires to the personas table): a read or write that waited for the lock while the persona was
deleted gets PersonaNotFound and creates nothing. Writes are atomic (temp file, fsync, rename,
fsync dir). Writing the content a file already has
creates no revision and returns the current revision id ("every change a revision": no change,
no revision), so saving twice or re-applying an edit is harmless.
"""
import logging
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ..models.cortex import CortexFile, Revision, RevisionDetail
from ..models.settings import MemoryRunSettings
from ..storage import cortex_archive as archive_store, cortex_revisions as store, provenance
from ..storage.db import Database
from . import archive, diffs, staged_apply
from .atomic import atomic_write, remove_stale_temp_files
from .errors import (
    CortexSizeError,
    InvalidContent,
    PersonaNotFound,
    RevisionConflict,
    RevisionNotFound,
)
from .locks import PersonaLocks
from .paths import CORTEX_FILES, DEFAULT_PERSONA, CortexPaths, validate_persona_id
from .prompt_cache import PromptTexts, Texts
from .snapshots import FileSnapshots, read_with_stat
from .staging import StagedEdits
from .templates import render_template

log = logging.getLogger(__name__)
DEFAULT_BUDGET = 12000
HARD_CAP_FACTOR = 4


class CortexService:
    """Reads, writes and versions the cortex files of every persona under `<data_dir>/cortex`."""

    def __init__(self, data_dir: str, db: Database,
                 settings: Callable[[], MemoryRunSettings] | None = None,
                 budget: int = DEFAULT_BUDGET, snapshots: FileSnapshots | None = None,
                 exists: Callable[[str], bool] | None = None,
                 prompt_texts: PromptTexts | None = None) -> None:
        self.db = db
        self._exists = exists
        self.paths = CortexPaths(data_dir)
        self.budget = int(budget)
        self.hard_cap = HARD_CAP_FACTOR * self.budget
        self._settings = settings or MemoryRunSettings
        self._locks = PersonaLocks(self.paths.lock_dir)
        self._snapshots = snapshots or FileSnapshots()
        self._prompt_texts = prompt_texts or PromptTexts()

    def lock(self, persona_id: str) -> AbstractContextManager[None]:
        """The persona's lock (a context manager): re-entrant, and held against other processes."""
        return self._locks.hold(validate_persona_id(persona_id))

    @contextmanager
    def _hold(self, persona_id: str) -> Iterator[None]:
        """The persona's lock, then the check that it still exists (re-checked after any wait)."""
        with self.lock(persona_id):
            if self._exists is not None and not self._exists(persona_id):
                self._locks.remove_file(persona_id)  # taking the lock created it anew
                raise PersonaNotFound(persona_id)
            yield

    def require_persona(self, persona_id: str) -> str:
        """`persona_id` if it names an existing persona (the routes' one guard; no lock, nothing
        created); raises InvalidPersonaId for a malformed id, PersonaNotFound for an unknown one."""
        validate_persona_id(persona_id)
        if self._exists is not None and not self._exists(persona_id):
            raise PersonaNotFound(persona_id)
        return persona_id

    def get_cortex_path(self, persona_id: str) -> str:
        """The directory holding the persona's three files."""
        return self.paths.persona_dir(persona_id)

    def ensure_cortex_files(self, persona_id: str) -> None:
        """Creates missing files from the templates (recorded as `template` revisions)."""
        with self._hold(persona_id):
            for filename in CORTEX_FILES:
                self._current(persona_id, filename)

    def read_file(self, persona_id: str, filename: str) -> str:
        """The file's content; '' (logged) if it cannot be read, so a chat never fails on it."""
        self._validate(persona_id, filename)
        try:
            return self.read_file_info(persona_id, filename).content
        except (OSError, sqlite3.Error):
            log.exception("Could not read cortex file %s/%s", persona_id, filename)
            return ""

    def read_file_info(self, persona_id: str, filename: str) -> CortexFile:
        """The file with its revision and size; raises on I/O errors."""
        self._validate(persona_id, filename)
        with self._hold(persona_id):
            return self._file(self._current(persona_id, filename))

    def read_all_info(self, persona_id: str) -> list[CortexFile]:
        """All three files, read under one lock."""
        with self._hold(persona_id):
            return [self._file(self._current(persona_id, name)) for name in CORTEX_FILES]

    def prompt_texts(self, persona_id: str, generation: int | None = None) -> Texts:
        """`(filename, content, revision)` of the three files for a chat prompt: as last read
        while no file and no revision row changed since (`prompt_cache.py`), else read under
        the lock like `read_all_info`. `generation`: the `cortex` change counter the caller
        read first (`storage/generations.py`), under which the newest revision ids are kept;
        None: they are queried."""
        directory = self.paths.stat_dir(persona_id)
        conn = self.db.conn()
        known = self._prompt_texts.lookup(
            persona_id, self._prompt_texts.key(conn, directory, persona_id, generation))
        if known is not None:
            return known
        with self._hold(persona_id):
            texts: Texts = [(info.filename, info.content, info.revision)
                     for info in (self._file(self._current(persona_id, name))
                                  for name in CORTEX_FILES)]
            self._prompt_texts.remember(
                persona_id, self._prompt_texts.key(conn, directory, persona_id), texts)
        return texts

    def read_all(self, persona_id: str) -> dict[str, str]:
        """`{'memory', 'soul', 'relationship'}` contents under one lock ('' for an unreadable file)."""
        try:
            return {info.filename[:-3]: info.content for info in self.read_all_info(persona_id)}
        except (OSError, sqlite3.Error):
            return {name[:-3]: self.read_file(persona_id, name) for name in CORTEX_FILES}

    def get_cortex_for_prompt(self, persona_id: str) -> dict[str, str]:
        """`{'cortex_memory', 'cortex_soul', 'cortex_relationship'}` for the system prompt."""
        return {f"cortex_{key}": text.strip() for key, text in self.read_all(persona_id).items()}

    def write_file(self, persona_id: str, filename: str, content: str, *, author: str = "user",
                   expected_revision: int | None = None, job_id: str | None = None,
                   message_range: tuple[int, int] | None = None,
                   summary: str | None = None) -> int:
        """Replaces the whole file; returns the new revision id (the current one if unchanged)."""
        self._validate(persona_id, filename, author)
        self._check_content(filename, content)
        with self._hold(persona_id):
            current = self._current(persona_id, filename)
            self._check_expected(current, expected_revision)
            return self._commit(persona_id, filename, content, current, author=author,
                                job_id=job_id, message_range=message_range, summary=summary)

    def edit_file(self, persona_id: str, filename: str, transform: Callable[[str], str], *,
                  author: str = "user", expected_revision: int | None = None,
                  job_id: str | None = None, message_range: tuple[int, int] | None = None,
                  summary: str | None = None) -> int:
        """Applies `transform(current) -> new` under the lock, so no concurrent edit is lost."""
        self._validate(persona_id, filename, author)
        with self._hold(persona_id):
            current = self._current(persona_id, filename)
            self._check_expected(current, expected_revision)
            content = transform(current["content"])
            self._check_content(filename, content)
            return self._commit(persona_id, filename, content, current, author=author,
                                job_id=job_id, message_range=message_range, summary=summary)

    def stage(self, persona_id: str, files: list[CortexFile] | None = None) -> StagedEdits:
        """A staged copy of the persona's files (as read now, or `files`) for a run's edits."""
        files = files if files is not None else self.read_all_info(persona_id)
        return StagedEdits(persona_id, {f.filename: (f.revision, f.content) for f in files},
                           hard_cap=self.hard_cap)

    def apply_staged(self, staged: StagedEdits, **details: Any) -> dict[str, int]:
        """Makes staged edits visible together, as one group of `ai` revisions."""
        return staged_apply.apply(self, staged, **details)

    def recover_staged(self) -> int:
        """Completes the groups of edits a crash interrupted (at start-up)."""
        return staged_apply.recover_all(self)

    def current_revision(self, persona_id: str, filename: str) -> sqlite3.Row:
        """The file's latest revision row, reconciled with the disk (hold the lock); raises
        PersonaNotFound for a persona deleted meanwhile, so a staged run recreates nothing."""
        with self._hold(persona_id):
            return self._current(persona_id, filename)

    def check_content(self, filename: str, content: object) -> None:
        """Raises InvalidContent or CortexSizeError for text that may not be stored."""
        self._check_content(filename, content)

    def file_of(self, row: sqlite3.Row) -> CortexFile:
        """The API shape of a revision row."""
        return self._file(row)

    def history(self, persona_id: str, filename: str) -> list[Revision]:
        """The file's revisions, newest first (a change made on disk is recorded first)."""
        self._validate(persona_id, filename)
        with self._hold(persona_id):
            self._current(persona_id, filename)
            return store.list_revisions(self.db.conn(), persona_id, filename)

    def get_revision(self, persona_id: str, filename: str, rev: int) -> RevisionDetail:
        """One revision with its content and a unified `diff` to its predecessor."""
        self._validate(persona_id, filename)
        row = self._find(persona_id, filename, rev)
        conn = self.db.conn()
        previous = store.previous_revision(conn, persona_id, filename, row["id"])
        source = provenance.sources_by_revision(conn, [row["id"]]).get(row["id"])
        return diffs.revision_detail(row, previous, source)

    def archive_entries(self, persona_id: str, filename: str,
                        query: str | None = None) -> list[dict]:
        """What consolidations let go from the file, newest first (`query`: containing it)."""
        return archive_store.list_entries(self.db.conn(), persona_id, filename, query)

    def restore_archived(self, persona_id: str, filename: str, entry_id: int,
                         text: str | None = None, expected_revision: int | None = None) -> int:
        """Appends an archive entry (or a part of it) to its file; see `archive.restore_entry`."""
        return archive.restore_entry(self, persona_id, filename, entry_id, text,
                                     expected_revision)

    def restore(self, persona_id: str, filename: str, rev: int,
                expected_revision: int | None = None) -> int:
        """Makes an old revision's content current again, as a new `restore` revision."""
        self._validate(persona_id, filename)
        row = self._find(persona_id, filename, rev)
        return self.write_file(persona_id, filename, row["content"], author="restore",
                               expected_revision=expected_revision,
                               summary=f"Restored revision {row['id']}")

    def reset(self, persona_id: str, filename: str, expected_revision: int | None = None) -> int:
        """Puts the template (current language and user name) back, as a `template` revision."""
        self._validate(persona_id, filename)
        return self.write_file(persona_id, filename, render_template(filename, self._settings()),
                               author="template", expected_revision=expected_revision,
                               summary="Reset to the template")

    def delete_cortex_dir(self, persona_id: str) -> bool:
        """Deletes a persona's files, revisions and lock file (the persona row must be gone
        already, so nobody who waited for the lock recreates anything); False for `default` or
        if nothing existed; raises OSError when the directory could not be removed."""
        validate_persona_id(persona_id)
        if persona_id == DEFAULT_PERSONA:
            log.warning("The default persona's cortex cannot be deleted")
            return False
        with self.lock(persona_id):
            directory = self.paths.persona_dir(persona_id)
            existed = os.path.isdir(directory)
            if existed:
                shutil.rmtree(directory)
            deleted = store.delete_persona_revisions(self.db.conn(), persona_id)
            self._snapshots.forget(persona_id)
            self._locks.remove_file(persona_id)
        log.info("Deleted the cortex of %s (%d revisions)", persona_id, deleted)
        return existed or deleted > 0

    def _validate(self, persona_id: str, filename: str, author: str = "user") -> None:
        """Id, name and resolved path are checked before the lock file or anything else exists."""
        self.paths.file(persona_id, filename)
        if author not in store.AUTHORS:
            raise ValueError(f"Unknown author {author!r}; use one of {', '.join(store.AUTHORS)}.")

    def _check_content(self, filename: str, content: object) -> None:
        if not isinstance(content, str):
            raise InvalidContent(f"The content of {filename} must be a string.")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as err:
            raise InvalidContent(f"The content of {filename} is not valid Unicode text.") from err
        if len(content) > self.hard_cap:
            raise CortexSizeError(filename, len(content), self.hard_cap)

    def _check_expected(self, current: sqlite3.Row, expected_revision: int | None) -> None:
        if expected_revision is not None and expected_revision != current["id"]:
            raise RevisionConflict(self._file(current), expected_revision)

    def _find(self, persona_id: str, filename: str, rev: object) -> sqlite3.Row:
        row = None
        if isinstance(rev, int) and not isinstance(rev, bool) and 0 < rev < 2 ** 63:
            row = store.find_revision(self.db.conn(), persona_id, filename, rev)
        if row is None:
            raise RevisionNotFound(persona_id, filename, rev)
        return row

    def _file(self, row: sqlite3.Row) -> CortexFile:
        version = store.version_of(self.db.conn(), row["persona_id"], row["filename"], row["id"])
        return CortexFile(filename=row["filename"], content=row["content"], revision=row["id"],
                          chars=row["chars"], budget=self.budget, version=version)

    def _current(self, persona_id: str, filename: str) -> sqlite3.Row:
        """Under the lock: the latest revision after reconciling it with the file on disk."""
        path = self.paths.file(persona_id, filename)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            for name in CORTEX_FILES:
                self._current(persona_id, name)
        remove_stale_temp_files(os.path.dirname(path))
        conn = self.db.conn()
        known = self._unchanged(conn, persona_id, filename, path)
        if known is not None:
            return known
        staged_apply.recover(self, persona_id)
        raw, st = read_with_stat(path)
        latest = self._settle_pending(conn, persona_id, filename, raw)
        if raw is None:
            if latest is None:
                content = render_template(filename, self._settings())
                return self._write_new(persona_id, filename, content, author="template",
                                       summary="Created from the template")
            log.warning("Cortex file %s/%s was missing on disk; rewrote revision %d",
                        persona_id, filename, latest["id"])
            atomic_write(path, latest["content"].encode("utf-8"))
            return latest
        assert st is not None  # read together with raw
        if latest is not None and store.sha256_of(raw) == latest["sha256"]:
            self._snapshots.remember((persona_id, filename), st, latest)
            return latest
        return self._record_disk(persona_id, filename, raw, latest)

    def _unchanged(self, conn: sqlite3.Connection, persona_id: str, filename: str,
                   path: str) -> sqlite3.Row | None:
        """The remembered revision if neither the file nor its revision rows changed since."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        known = self._snapshots.lookup((persona_id, filename), st)
        if known is not None and store.newest_id(conn, persona_id, filename) == known["id"]:
            return known
        return None

    def _settle_pending(self, conn: sqlite3.Connection, persona_id: str, filename: str,
                        raw: bytes | None) -> sqlite3.Row | None:
        """Keeps a killed writer's pending revision if the disk has it, drops it otherwise."""
        disk_sha = store.sha256_of(raw) if raw is not None else None
        kept = False
        for row in store.pending_revisions(conn, persona_id, filename):
            if not kept and row["sha256"] == disk_sha:
                store.commit_revision(conn, row["id"])
                kept = True
            else:
                store.drop_revision(conn, row["id"])
        return store.latest_revision(conn, persona_id, filename)

    def _record_disk(self, persona_id: str, filename: str, raw: bytes,
                     latest: sqlite3.Row | None) -> sqlite3.Row:
        """Records what is on disk before anything can overwrite it."""
        content = raw.decode("utf-8", errors="replace")
        author = "external"
        if latest is None and content == render_template(filename, self._settings()):
            author = "template"
        summary = "Changed on disk outside the app" if latest is not None else "Found on disk"
        if content.encode("utf-8") != raw:
            log.warning("Cortex file %s/%s is not valid UTF-8; storing it with replacement "
                        "characters", persona_id, filename)
            summary += " (invalid UTF-8 replaced)"
            return self._write_new(persona_id, filename, content, author=author, summary=summary)
        log.info("Recorded a change made on disk to %s/%s", persona_id, filename)
        rev = store.insert_revision(self.db.conn(), persona_id, filename, author, content,
                                    summary=summary)
        recorded = store.find_revision(self.db.conn(), persona_id, filename, rev)
        assert recorded is not None  # inserted just above
        return recorded

    def _commit(self, persona_id: str, filename: str, content: str, current: sqlite3.Row,
                **details: Any) -> int:
        if store.sha256_of(content) == current["sha256"]:
            return current["id"]
        return self._write_new(persona_id, filename, content, **details)["id"]

    def _write_new(self, persona_id: str, filename: str, content: str, *, author: str,
                   job_id: str | None = None, message_range: tuple[int, int] | None = None,
                   summary: str | None = None) -> sqlite3.Row:
        """Pending revision, atomic replace, commit: a crash leaves the old state or the new."""
        conn = self.db.conn()
        rev = store.insert_revision(conn, persona_id, filename, author, content, job_id=job_id,
                                    message_range=message_range, summary=summary or "",
                                    committed=False)
        try:
            atomic_write(self.paths.file(persona_id, filename), content.encode("utf-8"))
        except BaseException:
            store.drop_revision(conn, rev)
            raise
        store.commit_revision(conn, rev)
        log.info("Cortex %s/%s: revision %d by %s (%d chars)", persona_id, filename, rev, author,
                 len(content))
        written = store.find_revision(conn, persona_id, filename, rev)
        assert written is not None  # committed just above
        return written
