"""Request bodies of sessions, messages, branches and chat (DESIGN §7, §13).

Ids are looked up by the services (an unknown or malformed id is a 404), so their schema
shape is documentation; everything else is checked here.
"""
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from .base import Body, omittable, rule_error
from .fields import Line
from .ids import PERSONA_ID, SESSION_ID, shaped

MESSAGE_MAX = 32_000
TITLE_MAX = 120
_GREETING = ("The greeting that opens the session: 0 is `greeting`, n is "
             "`alternate_greetings[n-1]`.")
_MESSAGE_ID = "must be a message id (an integer)"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise rule_error("must be a non-empty string")
    return value


# A message's text: not blank, at most MESSAGE_MAX characters.
MessageText = Annotated[str, AfterValidator(_not_blank)]


class SessionCreate(Body):
    """POST /api/sessions: start a session with a persona."""

    rules: ClassVar[dict[str, str]] = {
        "greeting_index": "must be an integer from 0 to the index of the persona's last "
                          "greeting"}
    persona_id: str = Field(json_schema_extra=shaped(PERSONA_ID))
    greeting_index: int = Field(0, ge=0, description=_GREETING)


class SessionPatch(Body):
    """PATCH /api/sessions/{sid}: `{title}` renames; `{greeting_index}` alone picks the
    greeting (`409 conversation_started` once the session has messages); `{user_persona_id}`
    alone picks who the person is in it (null: the default)."""

    rules: ClassVar[dict[str, str]] = SessionCreate.rules
    title: Line = omittable(min_length=1, max_length=TITLE_MAX)
    greeting_index: int = omittable(ge=0, description=_GREETING)
    user_persona_id: int | None = omittable(ge=1, le=2**63 - 1)


class MessageEdit(Body):
    """The new text of a message (kept as a new sibling: a new branch).

    A person's message gets a sibling that ends the active branch; ask for its reply with
    `regenerate`. A reply gets a sibling marked `edited`. The originals stay as alternatives.
    `409 session_busy` while a reply streams in the session.
    """

    content: MessageText = Field(min_length=1, max_length=MESSAGE_MAX, json_schema_extra=shaped(r"\S"))


class ChatMessage(Body):
    """POST /api/chat/stream: the person's message to a session."""

    session_id: Any = Field(json_schema_extra={"type": "string", **shaped(SESSION_ID)},
                            description="Any other value is an unknown session (404).")
    message: MessageText = Field(min_length=1, max_length=MESSAGE_MAX, json_schema_extra=shaped(r"\S"))


class ReplyTarget(Body):
    """Which message to answer again or continue (default: the end of the active branch)."""

    rules: ClassVar[dict[str, str]] = {"message_id": _MESSAGE_ID}
    message_id: int | None = None


class BranchChoice(Body):
    """PUT /api/sessions/{sid}/active: the message whose branch (its newest leaf) becomes
    the active one."""

    rules: ClassVar[dict[str, str]] = {"message_id": _MESSAGE_ID}
    message_id: int = Field(ge=1)


class NoFields(Body):
    """An empty JSON object (`{}`)."""


class ContinueTarget(Body):
    """POST /api/sessions/{sid}/continue: the reply the model continues from its text."""

    rules: ClassVar[dict[str, str]] = {"message_id": _MESSAGE_ID}
    message_id: int
