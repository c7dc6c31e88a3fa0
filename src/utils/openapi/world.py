"""World info: lorebooks, their entries, which personas use them (docs/world-info.md)."""
from ..models import world as w
from .table import Op

_BOOK, _ENTRY = "/api/world-books/{bid}", "/api/world-books/{bid}/entries/{eid}"
_USE = "/api/personas/{pid}/world-books/{bid}"
ROUTES = {"personas": (
    Op("get", "/api/world-books", "Every lorebook (without entries).", w.WorldBooks),
    Op("post", "/api/world-books", "Create a shared book, or a persona's own one.", w.WorldBook,
       w.BookCreate, "400 404 409", "201"),
    Op("get", _BOOK, "One book with its entries.", w.WorldBook, errors="404"),
    Op("patch", _BOOK, "Change a book's settings.", w.WorldBook, w.BookPatch, "400 404"),
    Op("delete", _BOOK, "Delete a book and its entries.", w.DeletedItem, errors="404"),
    Op("post", _BOOK + "/entries", "Append an entry to a book.", w.WorldEntry, w.EntryPatch,
       "400 404 409", "201"),
    Op("patch", _ENTRY, "Change an entry's fields.", w.WorldEntry, w.EntryPatch, "400 404"),
    Op("delete", _ENTRY, "Delete an entry.", w.DeletedItem, errors="404"),
    Op("get", "/api/personas/{pid}/world-books", "The books a persona uses, its own first, "
       "with entries.", w.WorldBooks, errors="404"),
    Op("put", _USE, "Make the persona use a book.", w.WorldBooks, errors="400 404"),
    Op("delete", _USE, "Stop the persona using a book.", w.WorldBooks, errors="404"),
)}
