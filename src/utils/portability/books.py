"""A card's lorebook (`character_book`) in and out of the world info tables.

On import the book leaves the persona's `card` object and becomes the persona's own book (so it
is used at chat time and editable); on export it goes back into the card as it was stored, edits
included, every field it came with kept verbatim. A `character_book` that is not an object whose
`entries` is a list of objects cannot be used and stays in `card` untouched (exported as is).
"""
import sqlite3
from typing import Any, TypeGuard

from ..limits import WORLD_LISTS
from ..storage import world_books as book_store
from .errors import too_large

BOOK = "character_book"


def usable(book: object) -> TypeGuard[dict[str, Any]]:
    """True for a book the world info tables can hold."""
    return (isinstance(book, dict) and isinstance(book.get("entries"), list)
            and all(isinstance(entry, dict) for entry in book["entries"]))


def check_size(book: object) -> None:
    """413 `too_many_entries` for a usable book over the entries a book may hold: every entry
    is read at every chat turn, and a 2 MB card of 60,000 tiny entries made each turn spend a
    second of the worker's loop loading them."""
    if usable(book) and len(book["entries"]) > WORLD_LISTS["entries"]:
        raise too_large("too_many_entries", f"The card's lorebook has more than "
                        f"{WORLD_LISTS['entries']} entries.")


def split(fields: dict) -> tuple[dict, dict | None]:
    """`(fields without the usable book, the book)`; the book is None if there is none."""
    card = fields.get("card") or {}
    if not usable(card.get(BOOK)):
        return fields, None
    card = dict(card)
    book = card.pop(BOOK)
    return {**fields, "card": card}, book


def store_own(conn: sqlite3.Connection, persona_id: str, book: dict) -> None:
    """Stores `book` as the persona's own book, attached to it."""
    data = {key: value for key, value in book.items() if key != "entries"}
    book_store.create_book(conn, data, list(book["entries"]), persona_id)


def with_book(conn: sqlite3.Connection, persona: dict) -> dict:
    """`persona` with its own book back in `card.character_book` (for an export)."""
    own = book_store.own_book(conn, persona["id"])
    if own is None:
        return persona
    entries = [row.data for row in book_store.entries(conn, own.id)]
    card = {**(persona.get("card") or {}), BOOK: {**own.data, "entries": entries}}
    return {**persona, "card": card}
