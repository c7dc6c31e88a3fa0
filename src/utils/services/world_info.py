"""World info at chat time: the persona's books scanned against the branch being answered.

The activated entries go into the prompt after the cached prefix (prompt_builder) and are
recorded with the reply (`messages.world_info`), so the chat can show them beside "Memory used".
"""
import sqlite3
from collections.abc import Sequence

from ..models.history import HistoryMessage
from ..models.personas import Persona
from ..storage import world_books as book_store
from . import card_macros
from .world_entries import Book, read_book
from .world_scan import Fired, activate, prompt_order


def books_for(conn: sqlite3.Connection, persona_id: str) -> list[Book]:
    """The books attached to the persona, ready to scan."""
    return [read_book(book.id, book.data, book_store.entries(conn, book.id))
            for book in book_store.books_of_persona(conn, persona_id)]


def fire(books: list[Book], persona: Persona, card_user: str,
         history: Sequence[HistoryMessage]) -> list[Fired]:
    """The entries the conversation `history` (oldest first) activates in `books` (the
    persona's, `books_for`), in prompt order. Messages are scanned as `Name: text`, as
    SillyTavern does by default; `card_user` is what `{{user}}` is in card text."""
    if not books:
        return []
    char = card_macros.char_name(persona)
    names = {"user": card_user, "assistant": char}
    messages = [f"{names.get(turn.role, char)}: {turn.content}" for turn in reversed(history)]
    fired = activate(books, messages, lambda text: card_macros.resolve(text, char, card_user))
    return prompt_order(fired)
