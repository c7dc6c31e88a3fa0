"""World info (docs/world-info.md): lorebook and entry bodies, how the API shows them, and how
the store hands them over (`StoredBook`, `StoredEntry`: the card objects verbatim)."""
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import AfterValidator, BaseModel, Field

from .base import Body, omittable
from .fields import Line, Text
from .resource import Resource

KEY_MAX, KEYS_MAX, ENTRIES_MAX = 200, 64, 1000
Logic = Literal["and_any", "not_all", "not_any", "and_all"]
Position = Literal["before_char", "after_char"]
_LOGIC = ("How `secondary_keys` decide a `selective` entry (SillyTavern's selectiveLogic); "
          "stored in the entry's `extensions.selectiveLogic`.")
Key = Annotated[Line, Field(max_length=KEY_MAX)]
# Keys are trimmed single lines; empty ones are dropped.
Keys = Annotated[list[Key], AfterValidator(lambda keys: [key for key in keys if key])]


class BookPatch(Body):
    """A lorebook's own fields (the fields given change)."""

    name: Line = omittable(max_length=120)
    description: Text = omittable(max_length=4000)
    scan_depth: int = omittable(ge=0, le=1000)
    token_budget: int = omittable(ge=1, le=200_000)
    recursive_scanning: bool = omittable()


class BookCreate(BookPatch):
    """A new shared book, or (with `persona_id`) a persona's own book (`409 book_exists` if
    it has one)."""

    persona_id: str | None = omittable(max_length=32)


class EntryPatch(Body):
    """An entry's fields (a new entry: V2 defaults for what the body leaves out)."""

    rules: ClassVar[dict[str, str]] = {
        "keys": f"must be a list of at most {KEYS_MAX} strings of at most {KEY_MAX} characters",
        "secondary_keys": f"must be a list of at most {KEYS_MAX} strings of at most {KEY_MAX} "
                          "characters"}
    keys: Keys = omittable(max_length=KEYS_MAX)
    secondary_keys: Keys = omittable(max_length=KEYS_MAX)
    content: Text = omittable(max_length=20000)
    comment: Line = omittable(max_length=200)
    enabled: bool = omittable()
    constant: bool = omittable()
    selective: bool = omittable()
    selective_logic: Logic = omittable(description=_LOGIC)
    insertion_order: int = omittable(ge=-1_000_000, le=1_000_000)
    position: Position = omittable()
    case_sensitive: bool = omittable()
    match_whole_words: bool = omittable()


class WorldEntry(Resource):
    """An entry with its effective values (SillyTavern's precedence)."""

    id: int
    book_id: int
    keys: list[str]
    secondary_keys: list[str]
    content: str
    comment: str
    enabled: bool
    constant: bool
    selective: bool
    selective_logic: Logic
    insertion_order: int
    position: Position
    case_sensitive: bool
    match_whole_words: bool | None


class WorldBookSummary(Resource):
    """A lorebook without its entries (the list of all books)."""

    id: int
    persona_id: str | None = Field(None, description="The persona whose card brought the book "
                                   "(exported with it); null: a shared book.")
    name: str | None = None
    description: str | None = None
    scan_depth: int | None = None
    token_budget: int | None = None
    recursive_scanning: bool | None = None
    personas: list[str] = Field([], description="The personas that use the book.")
    created_at: str | None = None
    updated_at: str | None = None


class WorldBook(WorldBookSummary):
    """A lorebook."""

    entries: list[WorldEntry] = Field([], description="In the card's order (absent in the list "
                                      "of all books).")


class WorldBooks(Resource):
    """Books."""

    books: list[WorldBook]


class StoredBook(BaseModel):
    """A book as stored: `data` is the `character_book` object without `entries`, verbatim
    (unknown fields kept for the export); `personas` the ids of the personas using it."""

    id: int
    persona_id: str | None
    data: dict[str, Any]
    personas: list[str]
    created_at: str
    updated_at: str


class StoredEntry(NamedTuple):
    """An entry as stored: `data` is the entry object verbatim. A tuple, not a pydantic model:
    every chat turn reads all entries of the persona's books (up to a thousand per book), and
    validating each would cost microseconds per entry per turn for a check the store's own
    JSON already makes (docs/development.md, "Typed resources")."""

    id: int
    book_id: int
    data: dict[str, Any]


class DeletedItem(Resource):
    """Deleted."""

    id: int
    deleted: Literal[True]
