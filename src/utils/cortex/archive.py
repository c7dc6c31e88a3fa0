"""Putting back what a consolidation let go: an archive entry (or part of it) as a `restore`
revision at the end of its file (the entries themselves: storage/cortex_archive.py)."""
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from ..storage import cortex_archive as store
from ..storage.db import Database


class Restorable(Protocol):
    """What a restore needs of CortexService (which calls this module, so it is named by shape)."""

    @property
    def db(self) -> Database: ...

    def lock(self, persona_id: str) -> AbstractContextManager[None]: ...

    def edit_file(self, persona_id: str, filename: str, transform: Callable[[str], str], *,
                  author: str = ..., expected_revision: int | None = ...,
                  summary: str | None = ...) -> int: ...


def restore_entry(cortex: Restorable, persona_id: str, filename: str, entry_id: int,
                  text: str | None = None, expected_revision: int | None = None) -> int:
    """Appends the entry's text (or `text`, a part of it) to the end of the file as a `restore`
    revision; returns the revision. Raises LookupError / ValueError for a wrong entry or part."""
    conn = cortex.db.conn()
    entry = store.get_entry(conn, persona_id, filename, entry_id)
    if entry is None:
        raise LookupError("No archive entry with that id for this file.")
    part = entry["text"] if text is None else text
    if not part.strip() or part not in entry["text"]:
        raise ValueError("text must be a non-empty part of the archive entry.")

    def append(current: str) -> str:
        separator = "" if not current or current.endswith("\n") else "\n"
        return current + separator + (part if part.endswith("\n") else part + "\n")

    with cortex.lock(persona_id):
        revision = cortex.edit_file(persona_id, filename, append, author="restore",
                                    expected_revision=expected_revision,
                                    summary=f"Restored from the archive (entry {entry_id})")
        store.mark_restored(conn, entry_id, revision)
    return revision
