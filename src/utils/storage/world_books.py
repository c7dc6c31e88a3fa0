"""World info books and entries (lorebooks, docs/world-info.md).

A book's `data` is the `character_book` object without `entries`, kept verbatim; each entry is a
row whose `data` is the entry object verbatim. Both are JSON text here; callers get a
`StoredBook` and `StoredEntry` (models/world.py) with `data` decoded. `persona_id` is the persona
whose card brought the book (its own book), NULL for a shared one.
"""
import json
import sqlite3
from typing import Any

from ..models.world import StoredBook, StoredEntry
from .clock import utc_now

_BOOK = "SELECT id, persona_id, data, created_at, updated_at FROM world_books"


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def create_book(conn: sqlite3.Connection, data: dict[str, Any], entries: list[dict[str, Any]],
                persona_id: str | None = None) -> StoredBook:
    """Inserts a book with its entries in order (and attaches an own book to its persona)."""
    now = utc_now()
    cursor = conn.execute(
        "INSERT INTO world_books (persona_id, data, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (persona_id, _dumps(data), now, now))
    book_id = int(cursor.lastrowid or 0)
    conn.executemany("INSERT INTO world_entries (book_id, position, data) VALUES (?, ?, ?)",
                     [(book_id, index, _dumps(entry)) for index, entry in enumerate(entries)])
    if persona_id is not None:
        attach(conn, persona_id, book_id)
    created = get_book(conn, book_id)
    assert created is not None  # inserted just above
    return created


def get_book(conn: sqlite3.Connection, book_id: int) -> StoredBook | None:
    """The book row (`data` decoded, `personas`: the ids it is attached to), or None."""
    row = conn.execute(f"{_BOOK} WHERE id = ?", (book_id,)).fetchone()
    return _book(conn, row) if row else None


def own_book(conn: sqlite3.Connection, persona_id: str) -> StoredBook | None:
    """The book the persona's card brought (exported with it), or None."""
    row = conn.execute(f"{_BOOK} WHERE persona_id = ?", (persona_id,)).fetchone()
    return _book(conn, row) if row else None


def list_books(conn: sqlite3.Connection) -> list[StoredBook]:
    """Every book, oldest first."""
    return [_book(conn, row) for row in conn.execute(f"{_BOOK} ORDER BY id").fetchall()]


def books_of_persona(conn: sqlite3.Connection, persona_id: str) -> list[StoredBook]:
    """The books attached to a persona: its own book first, then shared ones, oldest first."""
    rows = conn.execute(
        f"{_BOOK} WHERE id IN (SELECT book_id FROM persona_world_books WHERE persona_id = ?) "
        "ORDER BY persona_id IS NOT ? , id", (persona_id, persona_id)).fetchall()
    return [_book(conn, row) for row in rows]


def set_book_data(conn: sqlite3.Connection, book_id: int, data: dict[str, Any]) -> bool:
    """Replaces a book's own fields (not its entries)."""
    return conn.execute("UPDATE world_books SET data = ?, updated_at = ? WHERE id = ?",
                        (_dumps(data), utc_now(), book_id)).rowcount == 1


def touch_book(conn: sqlite3.Connection, book_id: int) -> None:
    """Marks a book changed (an entry of it was)."""
    conn.execute("UPDATE world_books SET updated_at = ? WHERE id = ?", (utc_now(), book_id))


def delete_book(conn: sqlite3.Connection, book_id: int) -> bool:
    """Deletes a book with its entries and attachments (ON DELETE CASCADE)."""
    return conn.execute("DELETE FROM world_books WHERE id = ?", (book_id,)).rowcount == 1


def attach(conn: sqlite3.Connection, persona_id: str, book_id: int) -> None:
    """Makes the persona use the book (no error if it already does)."""
    conn.execute("INSERT OR IGNORE INTO persona_world_books (persona_id, book_id) VALUES (?, ?)",
                 (persona_id, book_id))


def detach(conn: sqlite3.Connection, persona_id: str, book_id: int) -> bool:
    """Stops the persona using the book; False if it did not."""
    return conn.execute("DELETE FROM persona_world_books WHERE persona_id = ? AND book_id = ?",
                        (persona_id, book_id)).rowcount == 1


def entries(conn: sqlite3.Connection, book_id: int) -> list[StoredEntry]:
    """A book's entries in the card's order."""
    rows = conn.execute("SELECT id, book_id, data FROM world_entries WHERE book_id = ? "
                        "ORDER BY position, id", (book_id,)).fetchall()
    return [_entry(row) for row in rows]


def get_entry(conn: sqlite3.Connection, entry_id: int) -> StoredEntry | None:
    """One entry, or None."""
    row = conn.execute("SELECT id, book_id, data FROM world_entries WHERE id = ?",
                       (entry_id,)).fetchone()
    return _entry(row) if row else None


def add_entry(conn: sqlite3.Connection, book_id: int, data: dict[str, Any]) -> StoredEntry:
    """Appends an entry to a book."""
    position = conn.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM world_entries "
                            "WHERE book_id = ?", (book_id,)).fetchone()[0]
    cursor = conn.execute("INSERT INTO world_entries (book_id, position, data) VALUES (?, ?, ?)",
                          (book_id, position, _dumps(data)))
    touch_book(conn, book_id)
    added = get_entry(conn, int(cursor.lastrowid or 0))
    assert added is not None  # inserted just above
    return added


def set_entry_data(conn: sqlite3.Connection, entry_id: int, data: dict[str, Any]) -> None:
    """Replaces an entry's object."""
    conn.execute("UPDATE world_entries SET data = ? WHERE id = ?", (_dumps(data), entry_id))


def delete_entry(conn: sqlite3.Connection, entry_id: int) -> bool:
    """Deletes one entry."""
    return conn.execute("DELETE FROM world_entries WHERE id = ?", (entry_id,)).rowcount == 1


def _book(conn: sqlite3.Connection, row: sqlite3.Row) -> StoredBook:
    personas = [r[0] for r in conn.execute(
        "SELECT persona_id FROM persona_world_books WHERE book_id = ? ORDER BY persona_id",
        (row["id"],)).fetchall()]
    return StoredBook.model_validate({**dict(row), "data": json.loads(row["data"]),
                                      "personas": personas})


def _entry(row: sqlite3.Row) -> StoredEntry:
    return StoredEntry(row["id"], row["book_id"], json.loads(row["data"]))
