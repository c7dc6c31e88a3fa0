"""Applying StagedEdits as one group of revisions, and completing a group a crash interrupted.

Under the persona's lock, in three steps:
1. one transaction: the group's revisions as pending rows plus a `cortex_changesets` row (the
   intent), after checking the caller's `guard` (e.g. the job still holds its lease);
2. each file replaced atomically (temp file, fsync, rename);
3. one transaction: the revisions committed, the job's messages marked processed, the job done,
   the changeset row deleted.
A crash before step 1 commits leaves nothing; after it, the next holder of the lock (any read,
or start-up) rolls the group forward from its pending rows (`recover`). So after any kill every
file equals a recorded revision, and a message range is processed exactly when its revisions
are visible. A file changed on disk outside the app meanwhile is not overwritten: the next read
records it as an `external` revision on top of the group's.
"""
import json
import logging
import os
import sqlite3
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..storage import (
    changesets,
    cortex_archive as archive_store,
    cortex_jobs as jobs,
    cortex_revisions as store,
    proposals as proposal_store,
    provenance,
    retractions,
)
from ..storage.db import Database, transaction
from .atomic import atomic_write
from .paths import CortexPaths
from .personas_lookup import persona_exists
from .staging import StagedEdits, StagedFile

log = logging.getLogger(__name__)
Guard = Callable[[sqlite3.Connection], bool]  # false inside the group's transaction: NotApplied


class GroupTarget(Protocol):
    """What applying a group needs of CortexService (which calls this module, so it is named by
    shape): its database, paths and lock, and a file's current revision row."""

    @property
    def db(self) -> Database: ...

    @property
    def paths(self) -> CortexPaths: ...

    def lock(self, persona_id: str) -> AbstractContextManager[None]: ...

    def current_revision(self, persona_id: str, filename: str) -> sqlite3.Row: ...


class NotApplied(Exception):
    """The guard refused the group (e.g. the job lost its lease); nothing was written."""


def apply(service: GroupTarget, staged: StagedEdits, *, job_id: str | None = None,
          message_range: tuple[int, int] | None = None, summary: str = "",
          outcome: dict[str, Any] | None = None, guard: Guard | None = None,
          review: dict[str, Any] | None = None, archive: bool = False,
          summary_for: Callable[[StagedFile], str] | None = None,
          sources: Iterable[dict[str, Any]] = (),
          sources_for: Callable[[str], Iterable[dict[str, Any]]] | None = None,
          source_kind: str = "derived", reverts: dict[str, int] | None = None,
          handles: Iterable[int] = (), job_continues: bool = False) -> dict[str, int]:
    """Applies the staged edits as one group; returns {filename: new revision id}.

    `review` ({proposal_id, review}) marks revisions made by accepting a proposal (and the
    proposal's files as accepted in step 3); `archive` keeps what each file loses (a
    consolidation); `summary_for(staged_file)` gives a file its own summary. Each revision is
    anchored to `sources` (storage/provenance.py, as `source_kind`), or to `sources_for(filename)`
    when given (a learn run: the windows that edited that file); `reverts` ({filename: rev}) marks
    direct reverts; `handles` (message_changes ids) are marked handled in step 3, and
    `job_continues` leaves the job running (a reconciliation followed by an update).
    Raises StagingConflict if a file changed under edits that cannot be replayed, NotApplied if
    `guard(conn)` is false; in both cases no file and no row changed.
    """
    conn, pid = service.db.conn(), staged.persona_id
    with service.lock(pid):
        if guard is not None and not guard(conn):  # before any read could recreate files
            raise NotApplied("the group's guard refused it")
        for staged_file in staged.changed_files():
            current = service.current_revision(pid, staged_file.filename)
            staged.rebase(staged_file.filename, current["id"], current["content"])
        changed = staged.changed_files()
        row: dict[str, Any] = {"id": uuid.uuid4().hex, "persona_id": pid, "job_id": job_id,
               "message_to": message_range[1] if message_range else None}
        with transaction(conn):
            if guard is not None and not guard(conn):
                raise NotApplied("the group's guard refused it")
            revs = {f.filename: store.insert_revision(
                conn, pid, f.filename, "ai", f.content, job_id=job_id,
                message_range=message_range, committed=False, review=review,
                summary=summary_for(f) if summary_for else summary,
                reverts=(reverts or {}).get(f.filename)) for f in changed}
            for name, rev in revs.items():
                provenance.add_sources(conn, rev, sources_for(name) if sources_for else sources,
                                       source_kind)
            row["revisions"] = json.dumps(list(revs.values()))
            row["outcome"] = json.dumps({
                "summary": summary, **(outcome or {}), "files": [f.filename for f in changed],
                "archive": archived(changed, revs, job_id) if archive else [],
                "review": review, "revisions_by_file": revs, "handles": list(handles),
                "job_continues": job_continues})
            changesets.insert_changeset(conn, row)
        _write_files(service, pid, changed, row)
        with transaction(conn):
            _complete(conn, row)
    if changed:
        log.info("Cortex %s: applied %s as one group (revisions %s)", pid,
                 ", ".join(revs), ", ".join(map(str, revs.values())))
    return revs


def archived(changed: list[StagedFile], revs: dict[str, int],
             job_id: str | None) -> list[dict[str, Any]]:
    """What each file loses: the lines of its old text missing from its new text, in order."""
    entries = []
    for staged_file in changed:
        kept = Counter(staged_file.content.splitlines())
        dropped = []
        for line in staged_file.base_content.splitlines():
            if kept[line] > 0:
                kept[line] -= 1
            elif line.strip():
                dropped.append(line)
        if dropped:
            entries.append({"filename": staged_file.filename, "text": "\n".join(dropped) + "\n",
                            "job_id": job_id, "revision_before": staged_file.base_revision,
                            "revision_after": revs[staged_file.filename]})
    return entries


def recover(service: GroupTarget, persona_id: str) -> int:
    """Under the persona's lock: completes every group a killed writer left; returns how many."""
    conn = service.db.conn()
    rows = changesets.changesets_of(conn, persona_id)
    for row in rows:
        if persona_exists(conn, persona_id):
            _roll_forward(service, persona_id, json.loads(row["revisions"]))
        with transaction(conn):
            _complete(conn, dict(row))
        log.warning("Cortex %s: completed a group of edits interrupted by a crash (job %s)",
                    persona_id, row["job_id"])
    return len(rows)


def recover_all(service: GroupTarget) -> int:
    """Completes the interrupted groups of every persona (at start-up and by the job reaper)."""
    conn = service.db.conn()
    personas = changesets.personas_with_changesets(conn)
    count = 0
    for persona_id in personas:
        with service.lock(persona_id):
            count += recover(service, persona_id)
    return count


def _write_files(service: GroupTarget, persona_id: str, changed: list[StagedFile],
                 row: dict[str, Any]) -> None:
    """Step 2; on an error the files already replaced get their old text back."""
    written = []
    try:
        for staged_file in changed:
            atomic_write(service.paths.file(persona_id, staged_file.filename),
                         staged_file.content.encode("utf-8"))
            written.append(staged_file)
    except Exception:
        try:
            for staged_file in written:
                atomic_write(service.paths.file(persona_id, staged_file.filename),
                             staged_file.base_content.encode("utf-8"))
            with transaction(service.db.conn()) as conn:
                for rev in json.loads(row["revisions"]):
                    store.drop_revision(conn, rev)
                changesets.delete_changeset(conn, row["id"])
        except Exception:
            log.exception("Could not undo a partly applied group for %s; the next read "
                          "completes it", persona_id)
        raise


def _roll_forward(service: GroupTarget, persona_id: str, revision_ids: list[int]) -> None:
    """Puts each pending revision's text on disk unless the disk already has it, or has a text
    changed outside the app (kept, and recorded as `external` by the next read)."""
    conn = service.db.conn()
    for rev in revision_ids:
        pending = store.pending_row(conn, rev)
        if pending is None:
            continue
        path = service.paths.file(persona_id, pending["filename"])
        try:
            with open(path, "rb") as handle:
                disk = store.sha256_of(handle.read())
        except FileNotFoundError:
            disk = None
        if disk == pending["sha256"]:
            continue
        latest = store.latest_revision(conn, persona_id, pending["filename"])
        if disk is None or latest is None or disk == latest["sha256"]:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            atomic_write(path, pending["content"].encode("utf-8"))


def _complete(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """Step 3 (inside a transaction): the group becomes visible with everything it implies."""
    persona_id, outcome = row["persona_id"], json.loads(row["outcome"] or "{}")
    alive = persona_exists(conn, persona_id)
    for rev in json.loads(row["revisions"]):
        if alive:
            store.commit_revision(conn, rev)
        else:
            store.drop_revision(conn, rev)
    if row["message_to"] is not None:
        jobs.mark_processed(conn, persona_id, row["message_to"])
    retractions.mark_handled(conn, outcome.get("handles") or [])
    if row["job_id"] is not None and not outcome.get("job_continues"):
        jobs.complete_job(conn, row["job_id"], files=outcome.get("files") or [],
                          usage=outcome.get("usage"), summary=outcome.get("summary") or "")
    if alive:
        for entry in outcome.get("archive") or []:
            archive_store.add_entry(conn, persona_id, entry)
    if alive and outcome.get("review"):
        proposal_store.mark_accepted(conn, outcome["review"], outcome.get("revisions_by_file")
                                     or {})
    changesets.delete_changeset(conn, row["id"])
