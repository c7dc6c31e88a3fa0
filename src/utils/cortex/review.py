"""ProposalService: review mode, built on the same staging as every cortex run.

In review mode a finished run's StagedEdits are stored as a proposal (storage/proposals.py) in the
transaction that marks its messages processed, instead of being applied. Accepting applies the
proposal's edits through `CortexService.apply_staged`, the one path every change of a run takes:
a file whose base revision is stale has its edits replayed on the current text (same rules as a
rebase), and if they no longer fit the person gets a conflict view instead. A new run while a
proposal is pending builds on the proposal's text (`stage_for_run`).
"""
import logging
from collections.abc import Callable, Iterable
from typing import Any

from ..models.cortex import CortexFile
from ..models.review import Proposal, ProposalSummary, StoredProposal, StoredProposalFile
from ..storage import cortex_jobs as jobs, proposals as store, retractions
from ..storage.db import Database, transaction
from . import diffs
from .errors import (
    InvalidContent,
    ProposalConflict,
    ProposalDecided,
    ProposalNotFound,
    RevisionConflict,
)
from .personas_lookup import persona_exists
from .run_outcome import consolidated_summary
from .service import CortexService
from .staged_apply import Guard, NotApplied
from .staging import Edit, StagedEdits, StagedFile, StagingConflict

log = logging.getLogger(__name__)


class ProposalService:
    """Creates, shows, accepts and rejects a persona's memory proposals."""

    def __init__(self, cortex: CortexService, db: Database) -> None:
        self._cortex = cortex
        self._db = db

    def stage_for_run(self, persona_id: str,
                      infos: list[CortexFile]) -> tuple[StagedEdits, list[CortexFile]]:
        """A staged copy built on the pending proposal's text, and the files as the model sees
        them (the proposed text where one is pending)."""
        staged = self._cortex.stage(persona_id, infos)
        _layer(staged, store.pending_proposal(self._db.conn(), persona_id))
        return staged, staged.shown(infos)

    def propose(self, staged: StagedEdits, *, job_id: str, kind: str, summary: str,
                message_range: tuple[int, int] | None = None,
                usage: dict[str, Any] | None = None, guard: Guard | None = None,
                sources: Iterable[dict[str, Any]] = (), handles: Iterable[int] = (),
                job_continues: bool = False) -> str | None:
        """Stores the run's edits as (part of) the pending proposal, marks its messages processed
        (and the retractions it `handles` handled) and its job done, in one transaction;
        returns the proposal id (None: nothing changed). `sources` anchor it when accepted."""
        conn = self._db.conn()
        with self._cortex.lock(staged.persona_id), transaction(conn):
            if guard is not None and not guard(conn):
                raise NotApplied("the run's guard refused it")
            proposal_id = store.save_proposal(conn, staged.persona_id, _changed(staged),
                                              job_id=job_id, kind=kind, summary=summary,
                                              message_range=message_range, sources=sources)
            if message_range:
                jobs.mark_processed(conn, staged.persona_id, message_range[1])
            retractions.mark_handled(conn, handles)
            if job_continues:
                jobs.set_proposal(conn, job_id, proposal_id)
            else:
                jobs.complete_job(conn, job_id, usage=usage, summary=summary,
                                  proposal_id=proposal_id)
        if proposal_id:
            log.info("Cortex %s: job %s proposed changes (proposal %s)", staged.persona_id,
                     job_id, proposal_id)
        return proposal_id

    def list_proposals(self, persona_id: str,
                       status: str | None = None) -> list[ProposalSummary]:
        """The persona's proposals, newest first."""
        return store.list_proposals(self._db.conn(), persona_id, status)

    def count_pending(self, persona_id: str) -> int:
        """0 or 1: whether a proposal waits for the person."""
        return store.count_pending(self._db.conn(), persona_id)

    def detail(self, persona_id: str, proposal_id: str) -> Proposal:
        """The proposal with, per file, the diff, staleness and what accepting would produce."""
        proposal = self._get(persona_id, proposal_id)
        with self._cortex.lock(persona_id):
            views = [self._file_view(persona_id, entry) for entry in proposal.files]
        stale = any(f["stale"] for f in views if f["status"] == "pending")
        return Proposal.model_validate({**proposal.model_dump(exclude={"files"}),
                                        "files": views, "stale": stale})

    def accept(self, persona_id: str, proposal_id: str, *, filename: str | None = None,
               content: str | None = None, expected_revision: int | None = None) -> Proposal:
        """Applies the proposal's pending files (or one of them, optionally with the person's
        edited text) as `ai` revisions noting the review; returns the proposal's detail."""
        proposal = self._get(persona_id, proposal_id)
        entries = self._pending_entries(proposal, filename)
        if (content is not None or expected_revision is not None) and len(entries) != 1:
            raise InvalidContent("Name the file (filename) whose text you send or whose "
                                 "revision If-Match names.")
        decision = "accepted" if content is None else "edited"
        with self._cortex.lock(persona_id):
            staged = self._staged_for_accept(persona_id, entries, content, expected_revision)
            unchanged = {e.filename: self._cortex.current_revision(
                persona_id, e.filename)["id"] for e in entries}
            review = {"proposal_id": proposal_id, "review": decision,
                      "files": [e.filename for e in entries], "unchanged": unchanged}
            names = review["files"]
            try:
                self._cortex.apply_staged(
                    staged, job_id=proposal.job_ids[-1] if proposal.job_ids else None,
                    message_range=_range(proposal), review=review,
                    archive="consolidate" in proposal.kinds,
                    summary=_accepted_summary(proposal, decision),
                    sources=proposal.sources,
                    summary_for=_consolidated(proposal, decision),
                    guard=lambda conn: (persona_exists(conn, persona_id)
                                        and store.files_pending(conn, proposal_id, names)))
            except StagingConflict as err:
                raise ProposalConflict(
                    f"{err.filename} changed since this proposal was made and its edits no "
                    "longer apply to the current text. Edit the proposed text against the "
                    "current one and accept that, or reject the proposal.",
                    [self._file_view(persona_id, e) for e in entries]) from None
            except NotApplied:
                raise ProposalDecided("This proposal was decided meanwhile.") from None
        log.info("Cortex %s: proposal %s %s (%s)", persona_id, proposal_id, decision,
                 ", ".join(names))
        return self.detail(persona_id, proposal_id)

    def reject(self, persona_id: str, proposal_id: str,
               filename: str | None = None) -> Proposal:
        """Drops the proposal's pending files (or one); the files stay as they are."""
        proposal = self._get(persona_id, proposal_id)
        entries = self._pending_entries(proposal, filename)
        conn = self._db.conn()
        with self._cortex.lock(persona_id), transaction(conn):
            for entry in entries:
                store.decide(conn, proposal_id, entry.filename, "rejected")
        log.info("Cortex %s: proposal %s rejected (%s)", persona_id, proposal_id,
                 ", ".join(e.filename for e in entries))
        return self.detail(persona_id, proposal_id)

    def _get(self, persona_id: str, proposal_id: object) -> StoredProposal:
        proposal = store.get_proposal(self._db.conn(), persona_id, proposal_id) \
            if isinstance(proposal_id, str) else None
        if proposal is None:
            raise ProposalNotFound("No proposal with that id for this persona.")
        return proposal

    @staticmethod
    def _pending_entries(proposal: StoredProposal,
                         filename: str | None) -> list[StoredProposalFile]:
        if filename is not None and filename not in {f.filename for f in proposal.files}:
            raise ProposalNotFound(f"This proposal does not change {str(filename)[:40]}.")
        entries = [f for f in proposal.files
                   if f.status == "pending" and filename in (None, f.filename)]
        if not entries:
            raise ProposalDecided("This proposal (or this file of it) was already "
                                  f"{proposal.status if filename is None else 'decided'}.")
        return entries

    def _staged_for_accept(self, persona_id: str, entries: list[StoredProposalFile],
                           content: str | None, expected_revision: int | None) -> StagedEdits:
        staged = StagedEdits(persona_id, {}, hard_cap=self._cortex.hard_cap)
        for entry in entries:
            if content is None:
                self._check_expected(persona_id, entry.filename, expected_revision)
                _add(staged, entry)
                continue
            self._cortex.check_content(entry.filename, content)
            current = self._cortex.current_revision(persona_id, entry.filename)
            if expected_revision is not None and expected_revision != current["id"]:
                raise RevisionConflict(self._cortex.file_of(current), expected_revision)
            base_revision, base_content = (current["id"], current["content"]) \
                if expected_revision is not None else (entry.base_revision, entry.base_content)
            staged.add_file(entry.filename, base_revision, base_content, content,
                            [Edit("write_file", {"content": content})])
        return staged

    def _check_expected(self, persona_id: str, filename: str,
                        expected_revision: int | None) -> None:
        """With If-Match on a plain accept: the file must still be at the revision reviewed."""
        if expected_revision is None:
            return
        current = self._cortex.current_revision(persona_id, filename)
        if expected_revision != current["id"]:
            raise RevisionConflict(self._cortex.file_of(current), expected_revision)

    def _file_view(self, persona_id: str, entry: StoredProposalFile) -> dict:
        """One file of a proposal as the person reviews it (hold the lock): the fields of a
        `ProposalFile` (also the conflict view of a 409)."""
        current = self._cortex.current_revision(persona_id, entry.filename)
        view = entry.model_dump(include={"filename", "status", "base_revision", "content",
                                         "revision", "review", "decided_at"})
        view.update(current_revision=current["id"], chars=len(entry.content),
                    base_chars=len(entry.base_content),
                    diff=unified(entry.base_content, entry.content, entry.filename,
                                 f"@{entry.base_revision}", "@proposed"),
                    stale=entry.status == "pending" and current["id"] != entry.base_revision,
                    conflict=False, rebased=None, current_content=None)
        if view["stale"]:
            view["current_content"] = current["content"]
            probe = _add(StagedEdits(persona_id, {}, hard_cap=self._cortex.hard_cap), entry)
            try:
                probe.rebase(entry.filename, current["id"], current["content"])
                view["rebased"] = probe.file(entry.filename).content
                view["diff_current"] = unified(current["content"], view["rebased"],
                                               entry.filename, f"@{current['id']}",
                                               "@proposed")
            except StagingConflict:
                view["conflict"] = True
        return view


def unified(before: str, after: str, filename: str, old: str, new: str) -> str:
    """A unified diff in the history's style (off the event loop when large: diffs.py)."""
    return diffs.unified(before, after, filename + old, filename + new)


def _layer(staged: StagedEdits, proposal: StoredProposal | None) -> StagedEdits:
    """Puts the pending files of `proposal` into `staged`, so a run builds on the proposal."""
    for entry in proposal.files if proposal is not None else ():
        if entry.status == "pending":
            _add(staged, entry)
    return staged


def _add(staged: StagedEdits, entry: StoredProposalFile) -> StagedEdits:
    """Stages a proposal's file: its base, its proposed text and the edits leading there."""
    staged.add_file(entry.filename, entry.base_revision, entry.base_content, entry.content,
                    [Edit.from_dict(e) for e in entry.edits])
    return staged


def _changed(staged: StagedEdits) -> list[dict]:
    """The staged files a run changed, as the proposal store keeps them."""
    return [{"filename": f.filename, "base_revision": f.base_revision,
             "base_content": f.base_content, "content": f.content,
             "edits": [edit.to_dict() for edit in f.edits]} for f in staged.changed_files()]


def _range(proposal: StoredProposal) -> tuple[int, int] | None:
    if proposal.message_from is None or proposal.message_to is None:
        return None
    return proposal.message_from, proposal.message_to


def _consolidated(proposal: StoredProposal,
                  decision: str) -> Callable[[StagedFile], str] | None:
    """Per-file summaries "consolidated: a → b characters" for a consolidation proposal."""
    if "consolidate" not in proposal.kinds:
        return None
    return lambda staged_file: f"{consolidated_summary(staged_file)} ({_note(decision)})"


def _accepted_summary(proposal: StoredProposal, decision: str) -> str:
    return f"{proposal.summary or 'Proposed change'} ({_note(decision)})"


def _note(decision: str) -> str:
    return "edited and accepted by the person" if decision == "edited" else \
        "accepted by the person"
