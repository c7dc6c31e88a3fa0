"""The chat stream's events (SSE and WebSocket share them) and the WebSocket's client frames.

The frames are parsed by `services/chat_frames.py` (a malformed one is an `error` frame, the
socket stays open); the models here are what the document shows for them.
"""
from typing import Any, Literal

from pydantic import BaseModel, Field

from .conversations import MESSAGE_MAX
from .ids import PERSONA_ID, SESSION_ID
from .resource import Resource

ERROR_CODES = ["not_configured", "authentication_failed", "credit_balance_exhausted",
               "rate_limited", "overloaded", "timeout", "connection_error", "invalid_request",
               "api_error", "session_busy", "session_not_found", "message_not_found",
               "nothing_to_regenerate", "nothing_to_continue", "not_last", "interrupted",
               "internal_error", "busy"]


class ChatStart(Resource):
    """A reply started."""

    session_id: str = Field(pattern=SESSION_ID)
    message_id: int = Field(ge=1, description="The person's message being answered.")
    reply_id: int = Field(ge=1, description="The reply (stored from the start, status "
                          "`streaming`).")


class IdleEvent(Resource):
    """Answers `resume`: no reply is being generated."""

    session_id: str


class ChatChunk(Resource):
    """More text of the reply."""

    text: str


class CortexProgress(Resource):
    """Progress towards the next memory update and the job in flight."""

    triggered: bool
    job_id: str | None
    progress: float | None = Field(ge=0, le=1)
    frequency: str | None
    unprocessed: int | None = None
    threshold: int | None = None
    enabled: bool | None = None


class ChatDone(Resource):
    """The reply ended; `stop_reason` is `cancelled` when it was stopped (kept, marked
    incomplete)."""

    message_id: int | None
    text: str
    usage: dict[str, Any]
    stop_reason: str | None
    cortex: CortexProgress | None


class ChatError(Resource):
    """The reply failed."""

    code: str = Field(examples=ERROR_CODES)
    message: str
    retryable: bool


class CortexEvent(Resource):
    """A memory update finished."""

    job_id: str | None
    persona_id: str
    status: Literal["done", "failed"]
    files: list[str]
    error: str | None
    reason: str | None = Field(None, description="The job's reason; `reconcile` when memory "
                               "followed retracted messages.")


class TitleEvent(Resource):
    """A session got its generated title."""

    session_id: str
    title: str


class SubscribedEvent(Resource):
    """The socket follows a persona's cortex updates."""

    persona_id: str


class _Frame(BaseModel):
    session_id: str = Field(None, pattern=SESSION_ID)  # type: ignore[assignment]


class ChatFrame(_Frame):
    """Send a message and get its reply."""

    type: Literal["chat"]
    session_id: str = Field(pattern=SESSION_ID)
    message: str = Field(min_length=1, max_length=MESSAGE_MAX, pattern=r"\S")


class RegenerateFrame(_Frame):
    """A new reply to `message_id` (a reply: answered again, kept as an alternative; a
    person's message: answered), or to the end of the session's active branch."""

    type: Literal["regenerate"]
    message_id: int | None = Field(None, ge=1)


class ContinueFrame(BaseModel):
    """The model continues the reply from its text."""

    type: Literal["continue"]
    message_id: int = Field(ge=1)


class ResumeFrame(BaseModel):
    """Follow the reply in flight: `start`, the text so far as one `chunk`, live `chunk`s,
    `done`; or `idle`."""

    type: Literal["resume"]
    session_id: str = Field(pattern=SESSION_ID)


class StopFrame(_Frame):
    """Stop the reply of `session_id` (default: the one followed)."""

    type: Literal["stop"]


class SubscribeFrame(BaseModel):
    """Follow a persona's cortex updates."""

    type: Literal["subscribe"]
    persona_id: str = Field(pattern=PERSONA_ID)


class Stopped(Resource):
    """Whether a reply was stopped."""

    session_id: str
    stopped: bool
