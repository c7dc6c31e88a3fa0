"""World info: lorebooks, their entries, which personas use them (docs/world-info.md)."""
from ..limits import WORLD_LISTS, WORLD_RANGES, WORLD_TEXT
from .common import (
    PERSONA_PARAM,
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    path_param,
    ref,
)

_BOOK_PARAM = path_param("bid", {"type": "integer", "minimum": 0}, "A book id.")
_ENTRY_PARAM = path_param("eid", {"type": "integer", "minimum": 0}, "An entry id.")
_LOGIC = {"enum": ["and_any", "not_all", "not_any", "and_all"],
          "description": "How `secondary_keys` decide a `selective` entry (SillyTavern's "
                         "selectiveLogic); stored in the entry's `extensions.selectiveLogic`."}
_POSITION = {"enum": ["before_char", "after_char"]}


def _text(field: str) -> dict:
    return {"type": "string", "maxLength": WORLD_TEXT[field]}


def _range(field: str) -> dict:
    low, high = WORLD_RANGES[field]
    return {"type": "integer", "minimum": low, "maximum": high}


_KEYS = {"type": "array", "maxItems": WORLD_LISTS["keys"],
         "items": {"type": "string", "maxLength": WORLD_TEXT["key"]}}
_ENTRY_FIELDS = {
    "keys": _KEYS, "secondary_keys": _KEYS, "content": _text("content"),
    "comment": _text("comment"), "enabled": {"type": "boolean"},
    "constant": {"type": "boolean"}, "selective": {"type": "boolean"},
    "selective_logic": _LOGIC, "insertion_order": _range("insertion_order"),
    "position": _POSITION, "case_sensitive": {"type": "boolean"},
    "match_whole_words": {"type": "boolean"},
}
_BOOK_FIELDS = {"name": _text("name"), "description": _text("description"),
                "scan_depth": _range("scan_depth"), "token_budget": _range("token_budget"),
                "recursive_scanning": {"type": "boolean"}}

SCHEMAS = {
    "WorldEntry": obj({"id": {"type": "integer"}, "book_id": {"type": "integer"},
                       **_ENTRY_FIELDS},
                      required=("id", "book_id", *_ENTRY_FIELDS)),
    "WorldBook": obj({
        "id": {"type": "integer"},
        "persona_id": nullable({"type": "string", "description": "The persona whose card "
                                "brought the book (exported with it); null: a shared book."}),
        **_BOOK_FIELDS,
        "personas": {"type": "array", "items": {"type": "string"},
                     "description": "The personas that use the book."},
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
        "entries": {"type": "array", "items": ref("WorldEntry"),
                    "description": "In the card's order (absent in the list of all books)."},
    }, required=("id", "persona_id", *_BOOK_FIELDS, "personas", "created_at", "updated_at")),
}


def paths() -> dict:
    """The world info paths."""
    book = json_response("The book with its entries.", ref("WorldBook"))
    books = json_response("Books.", obj({"books": {"type": "array", "items": ref("WorldBook")}},
                                        required=("books",)))
    entry = json_response("The entry.", ref("WorldEntry"))
    deleted = json_response("Deleted.", obj({"id": {"type": "integer"},
                                             "deleted": {"const": True}},
                                            required=("id", "deleted")))
    book_body = json_body(obj(_BOOK_FIELDS, additional=False))
    entry_body = json_body(obj(_ENTRY_FIELDS, additional=False))
    return {
        "/api/world-books": {
            "get": operation("listWorldBooks", "personas", "Every lorebook (without entries).",
                             {"200": books}),
            "post": operation(
                "createWorldBook", "personas", "Create a shared book, or a persona's own one.",
                {"201": book, **errors("400", "404", "409")}, write=True,
                requestBody=json_body(obj({**_BOOK_FIELDS, "persona_id": {"type": "string"}},
                                          additional=False)),
                description="With `persona_id` the book is that persona's own (exported with "
                            "its card, one per persona: 409 `book_exists`)."),
        },
        "/api/world-books/{bid}": {
            "parameters": [_BOOK_PARAM],
            "get": operation("getWorldBook", "personas", "One book with its entries.",
                             {"200": book, **errors("404")}),
            "patch": operation("updateWorldBook", "personas", "Change a book's settings.",
                               {"200": book, **errors("400", "404")}, write=True,
                               requestBody=book_body),
            "delete": operation("deleteWorldBook", "personas", "Delete a book and its entries.",
                                {"200": deleted, **errors("404")}, write=True),
        },
        "/api/world-books/{bid}/entries": {
            "parameters": [_BOOK_PARAM],
            "post": operation("addWorldEntry", "personas", "Append an entry to a book.",
                              {"201": entry, **errors("400", "404", "409")}, write=True,
                              requestBody=entry_body),
        },
        "/api/world-books/{bid}/entries/{eid}": {
            "parameters": [_BOOK_PARAM, _ENTRY_PARAM],
            "patch": operation("updateWorldEntry", "personas", "Change an entry's fields.",
                               {"200": entry, **errors("400", "404")}, write=True,
                               requestBody=entry_body),
            "delete": operation("deleteWorldEntry", "personas", "Delete an entry.",
                                {"200": deleted, **errors("404")}, write=True),
        },
        "/api/personas/{pid}/world-books": {
            "parameters": [PERSONA_PARAM],
            "get": operation("personaWorldBooks", "personas",
                             "The books a persona uses, its own first, with entries.",
                             {"200": books, **errors("404")}),
        },
        "/api/personas/{pid}/world-books/{bid}": {
            "parameters": [PERSONA_PARAM, _BOOK_PARAM],
            "put": operation("attachWorldBook", "personas", "Make the persona use a book.",
                             {"200": books, **errors("400", "404")}, write=True),
            "delete": operation("detachWorldBook", "personas", "Stop the persona using a book.",
                                {"200": books, **errors("404")}, write=True),
        },
    }
