"""World info: lorebooks, their entries, which personas use them (docs/world-info.md)."""
from ...routes import world
from ..models import conversations as c, world as w
from .table import Op

ROUTES = {"personas": (
    Op(world.list_books, w.WorldBooks),
    Op(world.create_book, w.WorldBook, w.BookCreate, "400 404 409", "201"),
    Op(world.get_book, w.WorldBook, errors="404"),
    Op(world.update_book, w.WorldBook, w.BookPatch, "400 404"),
    Op(world.delete_book, w.DeletedItem, errors="400 404"),
    Op(world.add_entry, w.WorldEntry, w.EntryPatch, "400 404 409", "201"),
    Op(world.update_entry, w.WorldEntry, w.EntryPatch, "400 404"),
    Op(world.delete_entry, w.DeletedItem, errors="400 404"),
    Op(world.persona_books, w.WorldBooks, errors="404"),
    Op(world.attach_book, w.WorldBooks, c.NoFields, "400 404", optional_body=True),
    Op(world.detach_book, w.WorldBooks, errors="400 404"),
)}
