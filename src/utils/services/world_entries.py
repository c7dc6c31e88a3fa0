"""Reading a stored lorebook entry or book the way SillyTavern does (docs/world-info.md).

Cards carry the V2/V3 `character_book` fields, and SillyTavern's exports add its own flags under
each entry's `extensions` (`selectiveLogic`, `position` as a number, `exclude_recursion`, ...).
Where both exist, SillyTavern's `convertCharacterBook` (public/scripts/world-info.js) decides
which one wins, and so do we. Nothing here changes the stored object: unknown or ill-typed fields
are read as their defaults and kept verbatim for export.
"""
from dataclasses import dataclass

from ..models.world import Logic, Position, StoredEntry

AND_ANY, NOT_ALL, NOT_ANY, AND_ALL = 0, 1, 2, 3
LOGICS: dict[Logic, int] = {"and_any": AND_ANY, "not_all": NOT_ALL, "not_any": NOT_ANY,
                             "and_all": AND_ALL}
DEFAULT_SCAN_DEPTH = 2  # SillyTavern's `world_info_depth`
MAX_SCAN_DEPTH = 1000  # SillyTavern's MAX_SCAN_DEPTH
DEFAULT_TOKEN_BUDGET = 2048
MAX_TOKEN_BUDGET = 200_000
DEFAULT_ORDER = 100


@dataclass(frozen=True)
class Entry:
    """One entry as the scan uses it (`book_id`, `id`: where it is stored)."""

    book_id: int
    id: int
    name: str
    keys: tuple[str, ...]
    secondary_keys: tuple[str, ...]
    selective: bool
    logic: int
    constant: bool
    enabled: bool
    order: int
    position: Position
    case_sensitive: bool
    whole_words: bool
    scan_depth: int | None
    exclude_recursion: bool
    prevent_recursion: bool
    delay_until_recursion: bool
    content: str


@dataclass(frozen=True)
class Book:
    """A book's scan settings with its entries."""

    id: int
    name: str
    scan_depth: int
    token_budget: int
    recursive: bool
    entries: tuple[Entry, ...]


def read_book(book_id: int, data: dict, rows: list[StoredEntry]) -> Book:
    """A stored book (its `data` and entries) with its effective settings."""
    depth = _int(data.get("scan_depth"))
    budget = _int(data.get("token_budget"))
    return Book(book_id, _str(data.get("name")),
                min(depth, MAX_SCAN_DEPTH) if depth is not None and depth >= 0
                else DEFAULT_SCAN_DEPTH,
                min(budget, MAX_TOKEN_BUDGET) if budget and budget > 0 else DEFAULT_TOKEN_BUDGET,
                data.get("recursive_scanning") is True,
                tuple(read_entry(book_id, row.id, row.data) for row in rows))


def read_entry(book_id: int, entry_id: int, data: dict) -> Entry:
    """An entry object with SillyTavern's precedence and defaults applied."""
    ext = extensions_of(data)
    depth = _int(ext.get("scan_depth"))
    return Entry(
        book_id=book_id, id=entry_id,
        name=_str(data.get("comment")) or _str(data.get("name")),
        keys=_keys(data.get("keys")), secondary_keys=_keys(data.get("secondary_keys")),
        selective=data.get("selective") is True, logic=logic_of(data),
        constant=data.get("constant") is True, enabled=data.get("enabled") is not False,
        order=_int(data.get("insertion_order")) or 0, position=position_of(data),
        case_sensitive=_flag(data.get("case_sensitive"), ext.get("case_sensitive"), False),
        whole_words=_flag(ext.get("match_whole_words"), None, True),
        scan_depth=min(depth, MAX_SCAN_DEPTH) if depth is not None and depth >= 0 else None,
        exclude_recursion=ext.get("exclude_recursion") is True,
        prevent_recursion=ext.get("prevent_recursion") is True,
        delay_until_recursion=bool(ext.get("delay_until_recursion")),
        content=_str(data.get("content")))


def logic_of(data: dict) -> int:
    """`extensions.selectiveLogic` (0-3) where the card carries it, else AND ANY."""
    ext = extensions_of(data)
    value = _int(ext.get("selectiveLogic"))
    return value if value in (AND_ANY, NOT_ALL, NOT_ANY, AND_ALL) else AND_ANY


def position_of(data: dict) -> Position:
    """`before_char` or `after_char`: SillyTavern's numeric `extensions.position` wins (0 before,
    1 after; its other places, author's note and depth, have no counterpart here: after)."""
    ext = extensions_of(data)
    number = _int(ext.get("position"))
    if number is not None:
        return "before_char" if number == 0 else "after_char"
    return "before_char" if data.get("position") == "before_char" else "after_char"


def extensions_of(data: dict) -> dict:
    """The entry's `extensions` object ({} when it has none or it is not an object)."""
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else {}


def _flag(first: object, second: object, default: bool) -> bool:
    """The first of two optional booleans that is set, else `default`."""
    for value in (first, second):
        if isinstance(value, bool):
            return value
    return default


def _keys(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(key.strip() for key in value if isinstance(key, str) and key.strip())


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
