"""Conversation search, export and memory notes as the API answers them."""
from typing import Literal

from pydantic import BaseModel, Field

from .base import Body
from .cortex import CortexFileName
from .resource import Resource
from .sessions import Message, Session

SEARCH_QUERY = 200


class SearchQuery(Body):
    """`GET /api/search` parameters (checked by the conversation tools: a missing or blank
    `q` is a 400 `validation_error`, an unknown persona a 404)."""

    persona_id: str = Field(min_length=1)
    q: str = Field(min_length=1, max_length=SEARCH_QUERY, description=(
        "Every word must occur (as a word or the start of one); case and accents are ignored. "
        "The words are never read as query syntax."))


class SearchResult(Resource):
    """One matching message."""

    session_id: str
    message_id: int
    snippet: str = Field(description="Plain text around the hit (never markup).")
    highlights: list[tuple[int, int]] = Field(description="[start, end) character ranges of "
                                              "the matched words in `snippet`.")
    role: Literal["user", "assistant"] | None = None
    created_at: str | None = None
    session_title: str | None = None


class SearchResults(Resource):
    """Matching messages, best first (at most 50)."""

    results: list[SearchResult]


class NoteFile(Resource):
    """What one update added to one file."""

    filename: CortexFileName
    rev: int = Field(description="The revision; its diff is in the history.")
    added: list[str] = Field(max_length=6, description="Lines the update added (trimmed, at "
                             "most 300 characters).")
    more: int = Field(ge=0, description="Further added lines.")


class MemoryNote(Resource):
    """One memory update's note, shown after the last message of the active branch it read."""

    after_message_id: int
    job_id: str | None
    created_at: str
    files: list[NoteFile]


class MemoryNotes(Resource):
    """Notes, oldest first (at most 100).

    One note per update and session, placed after the last message of the active branch the
    update read ("Mira remembered: …"). Derived from the AI revisions on every read;
    consolidations and the person's own edits make no notes.
    """

    session_id: str
    notes: list[MemoryNote]


class ExportPersona(BaseModel):
    """The persona a conversation is with."""

    id: str | None = None
    name: str | None = None


class ConversationExport(Resource):
    """The conversation as JSON (`?format=json`)."""

    session: Session
    persona: ExportPersona
    messages: list[Message] = Field(description="The active branch, oldest first.")
    alternatives: list[Message] = Field([], description="The messages off the active branch "
                                        "(each with its `parent_id`).")
