"""World info books over REST (docs/world-info.md): thin views over WorldBookService."""
from collections.abc import Sequence

from flask import Blueprint, Response, jsonify
from pydantic import BaseModel

from ..utils.models.conversations import NoFields
from ..utils.provider import get_world_book_service
from .errors import ApiError, body, json_body
from .guards import no_body_or_json, persona_id

bp = Blueprint("world", __name__, url_prefix="/api")
_MAX_ID = 2**63 - 1


def _id(value: int, what: str) -> int:
    """A path id SQLite can hold; larger numbers are unknown ids (404), never an overflow."""
    if value > _MAX_ID:
        raise ApiError(404, f"{what}_not_found", f"No such {what}.")
    return value


def _books(books: Sequence[BaseModel]) -> Response:
    """`{"books": [...]}`, each book as the API shows it."""
    return jsonify({"books": [book.model_dump(mode="json") for book in books]})


@bp.get("/world-books")
def list_books() -> Response:
    """Every lorebook (without entries)."""
    return _books(get_world_book_service().list_books())


@bp.post("/world-books")
def create_book() -> tuple[Response, int]:
    """Create a shared book, or a persona's own one."""
    return jsonify(get_world_book_service().create(json_body()).model_dump(mode="json")), 201


@bp.get("/world-books/<int:bid>")
def get_book(bid: int) -> Response:
    """One book with its entries."""
    return jsonify(get_world_book_service().get(_id(bid, "book")).model_dump(mode="json"))


@bp.patch("/world-books/<int:bid>")
def update_book(bid: int) -> Response:
    """Change a book's settings."""
    book = get_world_book_service().update(_id(bid, "book"), json_body())
    return jsonify(book.model_dump(mode="json"))


@bp.delete("/world-books/<int:bid>")
def delete_book(bid: int) -> Response:
    """Delete a book and its entries."""
    no_body_or_json()
    get_world_book_service().delete(_id(bid, "book"))
    return jsonify({"id": bid, "deleted": True})


@bp.post("/world-books/<int:bid>/entries")
def add_entry(bid: int) -> tuple[Response, int]:
    """Append an entry to a book."""
    entry = get_world_book_service().add_entry(_id(bid, "book"), json_body())
    return jsonify(entry.model_dump(mode="json")), 201


@bp.patch("/world-books/<int:bid>/entries/<int:eid>")
def update_entry(bid: int, eid: int) -> Response:
    """Change an entry's fields."""
    entry = get_world_book_service().update_entry(_id(bid, "book"), _id(eid, "entry"),
                                                  json_body())
    return jsonify(entry.model_dump(mode="json"))


@bp.delete("/world-books/<int:bid>/entries/<int:eid>")
def delete_entry(bid: int, eid: int) -> Response:
    """Delete an entry."""
    no_body_or_json()
    get_world_book_service().delete_entry(_id(bid, "book"), _id(eid, "entry"))
    return jsonify({"id": eid, "deleted": True})


@bp.get("/personas/<pid>/world-books")
def persona_books(pid: str) -> Response:
    """The books a persona uses, its own first, with entries."""
    return _books(get_world_book_service().of_persona(persona_id(pid)))


@bp.put("/personas/<pid>/world-books/<int:bid>")
def attach_book(pid: str, bid: int) -> Response:
    """Make the persona use a book."""
    pid = persona_id(pid)
    body(NoFields, required=False)
    return _books(get_world_book_service().attach(pid, _id(bid, "book")))


@bp.delete("/personas/<pid>/world-books/<int:bid>")
def detach_book(pid: str, bid: int) -> Response:
    """Stop the persona using a book."""
    pid = persona_id(pid)
    no_body_or_json()
    return _books(get_world_book_service().detach(pid, _id(bid, "book")))
