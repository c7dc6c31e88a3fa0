"""Sessions and messages as the API answers them (DESIGN §7, §13)."""
from typing import Any, Literal

from pydantic import Field

from .ids import PERSONA_ID, SESSION_ID, shaped
from .resource import Resource

_TIME = "ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z"


class SessionRow(Resource):
    """A conversation with one persona, as a chat turn reads it (no message count: counting
    the branch scans the session's messages)."""

    id: str = Field(json_schema_extra=shaped(SESSION_ID))
    persona_id: str = Field(json_schema_extra=shaped(PERSONA_ID))
    title: str
    created_at: str = Field(description=_TIME)
    updated_at: str = Field(description=_TIME)
    active_leaf_id: int | None = Field(None, ge=1, description="The last message of the "
                                       "active branch.")
    greeting_index: int = Field(ge=0, description="The greeting that opens the session: 0 is "
                                "`greeting`, n is `alternate_greetings[n-1]`.")
    user_persona_id: int | None = Field(None, ge=1, description="The user persona the "
                                        "conversation uses (\"About you\"); null: it follows "
                                        "the default (docs/about-you.md).")
    imported: bool = Field(False, description="Made by a chat import: it opens with its own "
                           "first message, without the persona's greeting.")


class Session(SessionRow):
    """A conversation with one persona."""

    message_count: int = Field(ge=0, description="Messages on the active branch.")


class SessionList(Resource):
    """One persona's sessions, most recently active first."""

    sessions: list[Session]


class ReplyError(Resource):
    """Why a reply failed; shown with Retry."""

    code: str
    message: str
    retryable: bool


class FiredEntry(Resource):
    """A world info entry that was in a reply's prompt (docs/world-info.md)."""

    book_id: int
    entry_id: int
    name: str = Field(description="The entry's comment (or name).")
    key: str | None = Field(description="The primary key that matched; null for a constant "
                            "entry.")
    constant: bool
    position: Literal["before_char", "after_char"]
    order: int
    tokens: int = Field(description="The documented estimate (UTF-8 bytes / 3, rounded up) "
                        "the budget counted.")
    content: str = Field(description="The text as it went into the prompt.")


class Message(Resource):
    """One message of a session's tree."""

    id: int = Field(ge=1)
    session_id: str = Field(json_schema_extra=shaped(SESSION_ID))
    persona_id: str = Field(json_schema_extra=shaped(PERSONA_ID))
    role: Literal["user", "assistant"]
    content: str
    status: Literal["complete", "incomplete", "streaming"] = Field(
        description="`streaming` while the reply is generated (its `content` is the text so "
                    "far: follow it with `resume`); `incomplete` when stopped, cut off, "
                    "interrupted or failed.")
    created_at: str = Field(description=_TIME)
    parent_id: int | None = Field(None, ge=1, description="The message this one answers or "
                                  "follows; null for the first.")
    siblings: list[int] = Field([], description="Ids of the alternatives at this position "
                                "(same parent), oldest first, this one included.")
    edited: bool = Field(False, description="A reply the person edited.")
    stop_reason: str | None = Field(None, description="How a reply ended: `end_turn`, "
                                    "`max_tokens`, `cancelled` (stopped), `interrupted`.")
    error: ReplyError | None = None
    cortex_revisions: dict[str, int] | None = Field(
        None, description="Replies only: the cortex revision of each file that was in the "
                          "reply's prompt; null when the cortex was off.")
    world_info: list[FiredEntry] | None = Field(
        None, description="Replies only: the world info entries that were in the reply's "
                          "prompt, in prompt order; null when none fired.")

    @property
    def streaming(self) -> bool:
        """True while the reply is being generated (in some process)."""
        return self.status == "streaming"

    def answer(self) -> dict[str, Any]:
        """The message as the API answers it: the fields its store set. A person's message has
        no `cortex_revisions` nor `world_info`, and only a message read with its session's tree
        has `siblings`, as the answers always had it."""
        return self.model_dump(mode="json", exclude_unset=True)


class MemoryLink(Resource):
    """A cortex revision anchored to a message: `derived` (learned from it) or `retracted`
    (a reconciliation removed what came from it)."""

    filename: str
    rev: int
    kind: Literal["derived", "retracted"]
    author: str


class MessageDetail(Message):
    """The message, the revisions it was answered with and the revisions anchored to it."""

    memory: list[MemoryLink]
    on_branch: bool = Field(description="On the session's active branch.")


class SessionPage(Session):
    """The session with one page of its active branch (oldest first)."""

    messages: list[Message]
    has_more: bool = Field(description="Older messages exist.")


class EditedPage(SessionPage):
    """The session's new active branch plus the new `message`."""

    message: Message


class DeletedExchange(SessionPage):
    """The session page plus the `deleted_ids`."""

    deleted_ids: list[int]


class SwitchedBranch(SessionPage):
    """The session page of the new branch plus its `active_leaf_id`."""

    active_leaf_id: int


class Deleted(Resource):
    """Deleted."""

    id: str
    deleted: Literal[True]
