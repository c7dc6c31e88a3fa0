"""Character cards, chat import and backups (DESIGN §12, §16): the answers of the import
endpoints (their input is a file, checked by `utils/portability/`)."""
from typing import Any, Literal

from pydantic import Field

from .resource import Resource
from .sessions import Session


class CardPreview(Resource):
    """With `preview=1`: what would be created; nothing is stored."""

    format: Literal["png", "json", "charx", "archive", "af"]
    spec_version: Literal[1, 2, 3] | None = Field(description="The card's spec version; null "
                                                  "for a persona archive or agent file.")
    sessions: int | None = Field(None, description="Archives: sessions it holds.")
    messages: int | None = Field(None, description="Archives: messages it holds.")
    persona: dict[str, Any] = Field(description="The fields the persona would get; "
                                    "`avatar_url` is a data: URL of the re-encoded picture.")
    includes_memories: bool
    name_clash: bool = Field(description="A persona with this name exists (the import still "
                             "creates a new one).")
    ignored: list[str] = Field(description="What is kept but not used, or not kept.")


class ChatImportSummary(Resource):
    """With `preview=1`: what the file holds; nothing is stored."""

    format: Literal["sillytavern", "persona_cortex"]
    title: str = Field(description="The new conversation's title.")
    messages: int = Field(description="Messages on the active branch.")
    stored: int = Field(description="Messages stored, alternatives included.")
    alternatives: int = Field(description="Messages off the active branch (unchosen swipes).")
    branch_points: int | None = Field(None, description="Messages with more than one "
                                      "alternative.")
    first_date: str
    last_date: str
    user_name: str | None = None
    character_name: str | None = None
    names: list[str] = Field([], description="Speakers named in the file (at most 20).")
    skipped_system: int | None = Field(None, description="SillyTavern `is_system` messages "
                                       "left out.")
    undated: int | None = Field(None, description="Messages whose date could not be read (they "
                                "take the previous message's date).")


class ImportedChat(Session):
    """The new session, with the import's counts under `summary`."""

    summary: ChatImportSummary | None = None
