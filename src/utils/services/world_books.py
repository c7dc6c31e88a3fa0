"""Lorebooks over REST: books, their entries, and which personas use them (docs/world-info.md).

Edits change only the fields they name, in the stored card objects, so an export gives back the
book as imported plus the edits, unknown fields verbatim. Where SillyTavern keeps a flag in the
entry's `extensions` too (`position`, `case_sensitive`), an edit sets it there as well, so
SillyTavern reads the edited value after a round trip.
"""
from ..limits import WORLD_LISTS
from ..models import parse
from ..models.world import (
    BookCreate,
    BookPatch,
    EntryPatch,
    StoredBook,
    StoredEntry,
    WorldBook,
    WorldBookSummary,
    WorldEntry,
)
from ..storage import Database, world_books as store
from .errors import ServiceError, not_found
from .persona_service import PersonaService
from .world_entries import DEFAULT_ORDER, LOGICS, read_book, read_entry


class WorldBookService:
    """CRUD for books and entries, attaching books to personas; the persona guard is injected."""

    def __init__(self, db: Database, personas: PersonaService):
        self._db = db
        self._personas = personas

    def list_books(self) -> list[WorldBookSummary]:
        """Every book (without entries)."""
        return [_summary(book) for book in store.list_books(self._db.conn())]

    def of_persona(self, persona_id: str) -> list[WorldBook]:
        """The books a persona uses, its own first, with their entries."""
        self._personas.get(persona_id)
        conn = self._db.conn()
        return [self._full(book) for book in store.books_of_persona(conn, persona_id)]

    def get(self, book_id: int) -> WorldBook:
        """One book with its entries; 404 when unknown."""
        return self._full(self._book(book_id))

    def create(self, body: dict) -> WorldBook:
        """A new shared book, or (with `persona_id`) a persona's own book; 409 if it has one.
        The check and the insert share one immediate (write) transaction: two racing creates
        serialize, and the second gets the 409, never the unique index's error."""
        persona_id = body.get("persona_id")
        given = parse(BookCreate, body).given()
        given.pop("persona_id", None)
        data = {"name": "", **given, "extensions": {}}
        with self._db.transaction() as conn:
            if persona_id is not None:
                self._personas.get(persona_id)
                if store.own_book(conn, persona_id) is not None:
                    raise ServiceError(409, "book_exists", "This persona already has its own "
                                       "book; add entries to it.")
            book = store.create_book(conn, data, [], persona_id)
        return self._full(book)

    def update(self, book_id: int, body: dict) -> WorldBook:
        """Changes the book's own fields given in the body."""
        changes = parse(BookPatch, body).given()
        with self._db.transaction() as conn:
            book = self._book(book_id)
            store.set_book_data(conn, book_id, {**book.data, **changes})
        return self.get(book_id)

    def delete(self, book_id: int) -> None:
        """Deletes a book with its entries; personas using it stop using it."""
        with self._db.transaction() as conn:
            self._book(book_id)
            store.delete_book(conn, book_id)

    def add_entry(self, book_id: int, body: dict) -> WorldEntry:
        """Appends a new entry (V2 defaults for what the body leaves out)."""
        changes = parse(EntryPatch, body).given()
        with self._db.transaction() as conn:
            self._book(book_id)
            rows = store.entries(conn, book_id)
            if len(rows) >= WORLD_LISTS["entries"]:
                raise ServiceError(409, "book_full", f"A book holds at most "
                                   f"{WORLD_LISTS['entries']} entries.")
            ids = [row.data.get("id") for row in rows]
            number = max((i for i in ids if isinstance(i, int) and not isinstance(i, bool)),
                         default=-1) + 1
            data = {"id": number, "keys": [], "secondary_keys": [], "comment": "",
                    "content": "", "constant": False, "selective": False,
                    "insertion_order": DEFAULT_ORDER, "enabled": True,
                    "position": "before_char", "case_sensitive": False, "extensions": {}}
            row = store.add_entry(conn, book_id, _apply(data, changes))
        return _entry_view(row)

    def update_entry(self, book_id: int, entry_id: int, body: dict) -> WorldEntry:
        """Changes the entry fields given in the body; the rest stays as it was."""
        changes = parse(EntryPatch, body).given()
        with self._db.transaction() as conn:
            row = self._entry(book_id, entry_id)
            store.set_entry_data(conn, entry_id, _apply(row.data, changes))
            store.touch_book(conn, book_id)
        return _entry_view(self._entry(book_id, entry_id))

    def delete_entry(self, book_id: int, entry_id: int) -> None:
        """Deletes one entry."""
        with self._db.transaction() as conn:
            self._entry(book_id, entry_id)
            store.delete_entry(conn, entry_id)
            store.touch_book(conn, book_id)

    def attach(self, persona_id: str, book_id: int) -> list[WorldBook]:
        """Makes the persona use the book; returns the persona's books."""
        with self._db.transaction() as conn:
            self._personas.get(persona_id)
            self._book(book_id)
            store.attach(conn, persona_id, book_id)
        return self.of_persona(persona_id)

    def detach(self, persona_id: str, book_id: int) -> list[WorldBook]:
        """Stops the persona using the book (the book itself stays); returns its books."""
        with self._db.transaction() as conn:
            self._personas.get(persona_id)
            self._book(book_id)
            if not store.detach(conn, persona_id, book_id):
                raise ServiceError(404, "book_not_attached", "The persona does not use this "
                                   "book.")
        return self.of_persona(persona_id)

    def _book(self, book_id: int) -> StoredBook:
        book = store.get_book(self._db.conn(), book_id)
        if book is None:
            raise not_found("book", str(book_id))
        return book

    def _entry(self, book_id: int, entry_id: int) -> StoredEntry:
        self._book(book_id)
        row = store.get_entry(self._db.conn(), entry_id)
        if row is None or row.book_id != book_id:
            raise not_found("entry", str(entry_id))
        return row

    def _full(self, book: StoredBook) -> WorldBook:
        rows = store.entries(self._db.conn(), book.id)
        return WorldBook(**dict(_summary(book)), entries=[_entry_view(row) for row in rows])


def _summary(book: StoredBook) -> WorldBookSummary:
    """A book's own fields as the API shows them: its effective scan settings."""
    settings = read_book(book.id, book.data, [])
    description = book.data.get("description")
    return WorldBookSummary(
        id=book.id, persona_id=book.persona_id, name=settings.name,
        description=description if isinstance(description, str) else "",
        scan_depth=settings.scan_depth, token_budget=settings.token_budget,
        recursive_scanning=settings.recursive, personas=book.personas,
        created_at=book.created_at, updated_at=book.updated_at)


def _entry_view(row: StoredEntry) -> WorldEntry:
    """An entry as the API shows it: its effective values (SillyTavern's precedence)."""
    entry = read_entry(row.book_id, row.id, row.data)
    comment = row.data.get("comment")
    return WorldEntry(
        id=row.id, book_id=row.book_id, keys=list(entry.keys),
        secondary_keys=list(entry.secondary_keys), content=entry.content,
        comment=comment if isinstance(comment, str) else entry.name,
        enabled=entry.enabled, constant=entry.constant, selective=entry.selective,
        selective_logic=next(k for k, v in LOGICS.items() if v == entry.logic),
        insertion_order=entry.order, position=entry.position,
        case_sensitive=entry.case_sensitive, match_whole_words=entry.whole_words)


def _apply(data: dict, changes: dict) -> dict:
    """`data` with the changes written where SillyTavern and the card spec read them; a field
    already at the given value is left alone, so saving an unchanged form changes nothing."""
    current = _entry_view(StoredEntry(0, 0, data))
    changes = {key: value for key, value in changes.items()
               if getattr(current, key) != value}
    data = dict(data)
    ext = dict(data["extensions"]) if isinstance(data.get("extensions"), dict) else None
    for field in ("keys", "secondary_keys", "content", "comment", "enabled", "constant",
                  "selective", "insertion_order"):
        if field in changes:
            data[field] = changes[field]
    if "position" in changes:
        data["position"] = changes["position"]
        if ext is not None and "position" in ext:
            ext["position"] = 0 if changes["position"] == "before_char" else 1
    if "case_sensitive" in changes:
        data["case_sensitive"] = changes["case_sensitive"]
        if ext is not None and isinstance(ext.get("case_sensitive"), bool):
            ext["case_sensitive"] = changes["case_sensitive"]
    extension_changes = {"selectiveLogic": LOGICS.get(changes.get("selective_logic", "")),
                         "match_whole_words": changes.get("match_whole_words")}
    for key, value in extension_changes.items():
        if value is not None:
            ext = ext if ext is not None else {}
            ext[key] = value
    if ext is not None:
        data["extensions"] = ext
    return data
