"""Review mode, pins and sleep (docs/memory-review.md): bodies and answers."""
from typing import Any, Literal

from pydantic import Field

from .base import Body, omittable
from .cortex import CortexFileName, CortexJob
from .resource import Resource

Decision = Literal["pending", "accepted", "rejected"]
_TIME = "ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z"


class FileChoice(Body):
    """None or `{}` for every pending file; `{filename}` for one."""

    filename: CortexFileName = omittable()


class Acceptance(FileChoice):
    """None or `{}` accepts every pending file; `{filename}` one, optionally with its edited
    `content` (then `If-Match` names the revision the text was written against).

    Accepting creates `ai` revisions noting the review. A stale file is replayed on the current
    text; if its edits no longer apply: `409 proposal_conflict` with `error.files` (the conflict
    view). Already decided: `409 proposal_decided`.
    """

    content: str = omittable()


class ArchiveRestore(Body):
    """None, or `{text}`: the part of the entry to append."""

    text: str = omittable()


class ProposalFileState(Resource):
    """A file of a proposal, in the list."""

    filename: CortexFileName | None = None
    status: Decision | None = None
    base_revision: int | None = None
    revision: int | None = None


class ProposalSummary(Resource):
    """A proposal: the edits an update staged in review mode."""

    id: str
    persona_id: str
    status: Decision
    job_ids: list[str] = Field(default_factory=list)
    kinds: list[Literal["update", "consolidate", "reconcile"]] = Field(default_factory=list)
    summary: str
    message_from: int | None = None
    message_to: int | None = None
    created_at: str | None = Field(None, description=_TIME)
    updated_at: str | None = None
    decided_at: str | None = None
    files: list[ProposalFileState]


class ProposalFile(Resource):
    """One file of a proposal: base revision, proposed text, diff, staleness."""

    filename: CortexFileName
    status: Decision
    base_revision: int
    current_revision: int
    content: str
    diff: str = Field(description="Unified diff base → proposed (history style).")
    stale: bool = Field(description="The file changed since the proposal.")
    conflict: bool = Field(description="Stale, and its edits no longer apply to the current "
                           "text.")
    rebased: str | None = Field(None, description="What accepting a stale file would "
                                "produce.")
    current_content: str | None = None
    revision: int | None = None
    review: str | None = None


class Proposal(ProposalSummary):
    """The proposal."""

    stale: bool | None = None
    files: list[ProposalFile]  # type: ignore[assignment]


class StoredProposalFile(Resource):
    """One file of a stored proposal: the revision and text it builds on, the proposed text and
    the edits leading there (what the review service replays; the API shows `ProposalFile`)."""

    filename: CortexFileName
    status: Decision
    base_revision: int
    base_content: str
    content: str
    edits: list[dict[str, Any]]
    revision: int | None
    review: str | None
    decided_at: str | None


class StoredProposal(ProposalSummary):
    """A proposal as stored: its files with texts and edits, and `sources`, the messages it
    came from (anchored when it is accepted)."""

    sources: list[dict[str, Any]]
    files: list[StoredProposalFile]  # type: ignore[assignment]


class ProposalList(Resource):
    """The persona's proposals, newest first."""

    persona_id: str
    pending: int
    proposals: list[ProposalSummary]


class Pin(Resource):
    """A pinned block (character offsets, end exclusive; 1-based lines)."""

    start: int | None = None
    end: int | None = None
    first_line: int | None = None
    last_line: int | None = None
    chars: int | None = None


class PinWarning(Resource):
    """A broken pin marker (treated as unpinned)."""

    line: int | None = None
    message: str | None = None


class Pins(Resource):
    """Pins (character offsets, end exclusive; 1-based lines)."""

    filename: CortexFileName
    revision: int
    pins: list[Pin]
    warnings: list[PinWarning]


class ConsolidationOutcome(Resource):
    """The persona's newest finished consolidation, as the sleep status shows it (its
    `last_consolidation`)."""

    id: str
    status: Literal["done", "failed"]
    summary: str | None
    error: str | None
    finished_at: str | None
    proposal_id: str | None


class SleepStatus(Resource):
    """The sleep status."""

    sleep_enabled: bool
    sleep_sessions: int | None = None
    sleep_hours: int | None = None
    sessions_since: int | None = None
    hours_since: float | None = None
    over_budget: bool | None = None
    due: Literal["budget", "schedule"] | None
    job_id: str | None = None
    last_consolidation: ConsolidationOutcome | None


class ConsolidationQueued(Resource):
    """Queued (a job with reason `consolidate`)."""

    job_id: str
    status: str
    created: bool
    job: CortexJob


class ArchiveEntry(Resource):
    """Something a consolidation let go from a file."""

    id: int | None = None
    text: str | None = None
    chars: int | None = None
    job_id: str | None = None
    revision_before: int | None = None
    revision_after: int | None = None
    created_at: str | None = None
    restored_at: str | None = None
    restored_revision: int | None = None


class Archive(Resource):
    """Entries, newest first."""

    persona_id: str
    filename: CortexFileName
    entries: list[ArchiveEntry]
