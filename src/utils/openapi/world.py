"""World info: lorebooks, their entries, which personas use them (docs/world-info.md)."""
from ..models.world import (
    BookCreate,
    BookPatch,
    DeletedItem,
    EntryPatch,
    WorldBook,
    WorldBooks,
    WorldEntry,
)
from .table import Op, table_paths

_BOOK, _ENTRY = "/api/world-books/{bid}", "/api/world-books/{bid}/entries/{eid}"
_USE = "/api/personas/{pid}/world-books/{bid}"
ROUTES = (
    Op("get", "/api/world-books", "Every lorebook (without entries).", WorldBooks),
    Op("post", "/api/world-books", "Create a shared book, or a persona's own one.", WorldBook,
       BookCreate, "400 404 409", "201"),
    Op("get", _BOOK, "One book with its entries.", WorldBook, errors="404"),
    Op("patch", _BOOK, "Change a book's settings.", WorldBook, BookPatch, "400 404"),
    Op("delete", _BOOK, "Delete a book and its entries.", DeletedItem, errors="404"),
    Op("post", _BOOK + "/entries", "Append an entry to a book.", WorldEntry, EntryPatch,
       "400 404 409", "201"),
    Op("patch", _ENTRY, "Change an entry's fields.", WorldEntry, EntryPatch, "400 404"),
    Op("delete", _ENTRY, "Delete an entry.", DeletedItem, errors="404"),
    Op("get", "/api/personas/{pid}/world-books", "The books a persona uses, its own first, "
       "with entries.", WorldBooks, errors="404"),
    Op("put", _USE, "Make the persona use a book.", WorldBooks, errors="400 404"),
    Op("delete", _USE, "Stop the persona using a book.", WorldBooks, errors="404"),
)


def paths() -> dict:
    """The world info paths."""
    return table_paths("personas", ROUTES)
