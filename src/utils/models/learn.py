"""Learning from an imported conversation (issue 24, docs/chat-import.md#learning-from-it):
the start body, the estimate's query and the answers."""
from typing import Any

from pydantic import Field

from .base import Body
from .cortex import CortexJob, JobStatus
from .resource import Resource

MIN_WINDOW, MAX_WINDOW = 2, 200
_TIME = "ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z"
_WINDOW = ("Messages per window (default: the update threshold, 75 % of the context limit with "
           "the default frequency).")


class LearnStart(Body):
    """POST …/learn: how many messages a window holds (optional; the body may be left out)."""

    window_messages: int | None = Field(None, ge=MIN_WINDOW, le=MAX_WINDOW, description=_WINDOW)


class LearnEstimateQuery(Body):
    """GET …/learn/estimate parameters."""

    window_messages: int | None = Field(None, ge=MIN_WINDOW, le=MAX_WINDOW, description=_WINDOW)


class LearnCost(Resource):
    """What the run would cost, from the price table."""

    usd: float | None
    currency: str | None = None
    known: bool = Field(description="False for an OpenAI-compatible endpoint or a model the "
                                    "price table does not know (`usd` is null).")
    model: str
    provider: str
    input_per_million: float | None = None
    output_per_million: float | None = None


class LearnEstimate(Resource):
    """Windows, tokens and cost of learning from the conversation; nothing runs."""

    session_id: str | None = None
    persona_id: str | None = None
    window_messages: int | None = None
    messages: int
    windows: int = Field(description="Update requests the run will send (one per window).")
    input_tokens: int = Field(description="Estimated (UTF-8 bytes / 3), two rounds a window, "
                                          "no cache discount.")
    output_tokens: int = Field(description="Estimated: 1,000 a window.")
    output_tokens_max: int | None = Field(None, description="The cap: max_tokens for every "
                                                            "round.")
    cost: LearnCost


class LearnRun(Resource):
    """A learn run: progress is `windows_done` of `windows`."""

    job_id: str = Field(description="Also a cortex job (`reason: learn`).")
    session_id: str | None = None
    persona_id: str | None = None
    status: JobStatus
    windows: int
    windows_done: int = Field(description="Windows read so far (staged; applied only at the "
                                          "end).")
    messages: int | None = None
    window_messages: int | None = None
    cancel_requested: bool | None = None
    cancelled: bool
    error: str | None = None
    error_message: str | None = None
    proposal_id: str | None = None
    summary: str | None = None
    usage: dict[str, Any] | None = None
    files: list[str] = Field(default_factory=list)
    created_at: str | None = Field(None, description=_TIME)
    started_at: str | None = None
    finished_at: str | None = None


class StoredLearnRun(Resource):
    """A learn run as stored (its `cortex_learn_runs` row), with its job once read beside it
    (`cortex/learn_runs.get_run`); `history_learning.run_view` shows it as a `LearnRun`."""

    job_id: str
    persona_id: str
    session_id: str
    window_messages: int
    windows: int
    windows_done: int
    messages: int
    cancel_requested: bool
    created_at: str
    job: CortexJob | None = None


class LearnStatus(Resource):
    """The conversation's newest learn run (or null)."""

    session_id: str | None = None
    persona_id: str | None = None
    run: LearnRun | None
