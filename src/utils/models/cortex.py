"""The cortex as the API answers it: files, revisions, update jobs (DESIGN §5, §7)."""
from typing import Any, Literal, NamedTuple

from pydantic import Field

from .base import Body
from .ids import JOB_ID, PERSONA_ID, shaped
from .resource import Resource

CortexFileName = Literal["memory.md", "soul.md", "relationship.md"]
_TIME = "ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z"
JobStatus = Literal["queued", "running", "done", "failed"]


class FileContent(Body):
    """PUT …/cortex/{filename}: the whole file as text (needs `If-Match`, 428 without it).
    Over the hard cap: `413 cortex_file_too_large`; nothing is written."""

    content: str


class CortexFile(Resource):
    """One cortex file; its ETag is its revision."""

    filename: CortexFileName
    content: str
    revision: int = Field(ge=1, description="The newest revision's id; also the ETag.")
    chars: int = Field(ge=0)
    budget: int = Field(ge=1)
    version: int = Field(ge=1, description="The file's own number of this revision (1 for its "
                         "first), as its history counts them; what the interface shows.")


class CortexFiles(Resource):
    """All three files with revisions and sizes."""

    persona_id: str
    budget: int
    hard_cap: int
    files: list[CortexFile] = Field(min_length=3, max_length=3)


class SourceSession(Resource):
    """The messages of one session a revision came from."""

    session_id: str
    message_ids: list[int]


class RevisionSource(Resource):
    """The messages a revision came from (anchoring)."""

    kind: Literal["derived", "retracted"] = Field(
        description="`derived`: an update learned this revision from the messages; "
                    "`retracted`: a reconciliation removed what came from them.")
    session_id: str = Field(description="The session of the newest message.")
    message_ids: list[int]
    sessions: list[SourceSession] = Field(description="The messages per session (an update "
                                          "can span sessions).")


class Reviewed(Resource):
    """How a reviewed revision was decided."""

    reviewer: str | None = None
    decision: Literal["accepted", "edited"] | None = None
    proposal_id: str | None = None


class Revision(Resource):
    """One revision of a cortex file."""

    rev: int = Field(ge=1)
    author: Literal["user", "ai", "template", "restore", "external"]
    created_at: str = Field(description=_TIME)
    summary: str
    sha256: str = Field(json_schema_extra=shaped("^[0-9a-f]{64}$"))
    chars: int | None = Field(None, ge=0)
    job_id: str | None = None
    message_from: int | None = None
    message_to: int | None = None
    reviewed: Reviewed | None = None
    source: RevisionSource | None = None
    reverts: int | None = Field(None, description="A direct revert (no model call) names the "
                                "earliest revision it undoes.")


class History(Resource):
    """The file's revisions, newest first."""

    persona_id: str
    filename: CortexFileName
    revisions: list[Revision]


class RevisionDetail(Revision):
    """One revision with its content and a unified diff to its predecessor."""

    filename: CortexFileName
    content: str
    previous_rev: int | None
    diff: str = Field(description="Unified diff to the previous revision.")


class AttemptedEdit(Resource):
    """An edit a failed run staged: `{file, action, ...arguments}`."""

    file: str
    action: str


class CortexJob(Resource):
    """One cortex update job."""

    id: str = Field(json_schema_extra=shaped(JOB_ID))
    persona_id: str = Field(json_schema_extra=shaped(PERSONA_ID))
    status: JobStatus
    files: list[str]
    error: str | None
    error_message: str | None = None
    retryable: bool | None = None
    trigger: Literal["threshold", "idle", "manual"] | None = None
    reason: Literal["threshold", "idle", "manual", "reconcile", "consolidate", "learn"] | None = None
    proposal_id: str | None = Field(None, description="Review mode: the proposal this job's "
                                    "edits went into (the files were not changed).")
    summary: str | None = None
    usage: dict[str, Any] | None = None
    message_from: int | None = None
    message_to: int | None = None
    created_at: str | None = Field(None, description=_TIME)
    started_at: str | None = None
    finished_at: str | None = None
    attempted: list[AttemptedEdit] = Field([], description="The edits a failed run staged, "
                                           "kept for inspection and never applied.")


class ActiveJobs(NamedTuple):
    """A persona's queued and running job (each None when there is none); the runner's view,
    never an answer."""

    queued: CortexJob | None
    running: CortexJob | None


class UpdateQueued(Resource):
    """Queued (`Location`: the job)."""

    job_id: str = Field(json_schema_extra=shaped(JOB_ID))
    status: JobStatus
    created: bool
    job: CortexJob


class ConflictDetail(Resource):
    """The error of a stale write: the file as it is now."""

    code: Literal["revision_conflict"]
    message: str
    current: CortexFile


class RevisionConflictError(Resource):
    """The file changed meanwhile; `error.current` is the file now (and the `ETag` its
    revision)."""

    error: ConflictDetail
