"""The direct path of reconciliation: undoing AI revisions without a model call.

A file can be reverted directly when the revisions in effect at its top are all `ai` revisions
derived only from messages that left the conversation, and no revision below them still draws on
a retracted message. A person's edit, a restore or a later update on top blocks the direct path
(the model path then removes only what came from the retracted messages). A direct revert is
itself transparent to later reverts: it names the earliest revision it undoes (`reverts`), and
the walk skips everything it undid.
"""
import sqlite3
from dataclasses import dataclass

from ..storage import cortex_revisions as revisions, provenance, retractions
from .paths import CORTEX_FILES


@dataclass(frozen=True)
class FileRevert:
    """One file's direct revert: back to `target` (a revision row), undoing `undone` ids."""

    filename: str
    target_id: int
    content: str
    undone: tuple[int, ...]


def plan(conn: sqlite3.Connection, persona_id: str,
         relevant: set[int]) -> list[FileRevert] | None:
    """The direct reverts that remove everything `relevant` messages left in memory, or None
    when some file needs the model (or nothing is anchored to them at all)."""
    reverts = []
    for filename in CORTEX_FILES:
        effective = _in_effect(conn, persona_id, filename)
        undone, target = [], None
        for rev in effective:
            derived = provenance.derived_messages(conn, rev["id"])
            if rev["author"] == "ai" and derived and not (
                    derived - retractions.off_branch(conn, derived)):
                undone.append(rev["id"])
                continue
            target = rev
            break
        older = effective[len(undone) + 1:]
        if any(provenance.derived_messages(conn, rev["id"]) & relevant for rev in older):
            return None
        if undone:
            if target is None:
                return None
            reverts.append(FileRevert(filename, target["id"], target["content"], tuple(undone)))
    return reverts or None


def _in_effect(conn: sqlite3.Connection, persona_id: str, filename: str) -> list[sqlite3.Row]:
    """The file's committed revisions newest first, without direct reverts and what they
    undid (a revert's text is that of the revision before the one it names)."""
    rows = revisions.committed_texts(conn, persona_id, filename)
    effective, floor = [], None
    for row in rows:
        if floor is not None and row["id"] >= floor:
            continue
        if row["reverts"] is not None:
            floor = row["reverts"] if floor is None else min(floor, row["reverts"])
            continue
        effective.append(row)
    return effective
