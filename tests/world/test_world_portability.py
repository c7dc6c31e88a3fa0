"""A card's lorebook in and out (docs/world-info.md): SillyTavern's own Seraphina card imports
as the persona's book, exports byte-for-byte equal as JSON values (unknown fields included) and
with our edits after editing; books imported before migration 0040 move into the tables; backups
hold the books."""
import base64
import copy
import io
import json
import sqlite3
import tempfile
import zipfile
from contextlib import closing
from pathlib import Path

from src.utils.portability import png as png_chunks
from src.utils.portability.card_files import CARD_CHUNKS
from src.utils.storage import db as storage
from tests.portability.support import upload

SERAPHINA = json.loads((Path(__file__).parent / "fixtures" / "seraphina.json")
                       .read_text(encoding="utf-8"))
BOOK = SERAPHINA["data"]["character_book"]


def _import(client, card: dict = SERAPHINA) -> dict:
    response = upload(client, json.dumps(card).encode(), filename="card.json")
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _exported(client, pid: str, fmt: str = "json") -> dict:
    response = client.get(f"/api/personas/{pid}/export?format={fmt}")
    assert response.status_code == 200
    if fmt == "png":
        return {k: json.loads(base64.b64decode(v))
                for k, v in png_chunks.text_chunks(response.data, CARD_CHUNKS)}
    return json.loads(response.data)


def test_a_real_card_with_a_lorebook_round_trips_verbatim(client):
    persona = _import(client)
    books = client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"]
    assert len(books) == 1 and books[0]["name"] == "Eldoria"
    assert [e["keys"][0] for e in books[0]["entries"]] == ["eldoria", "shadowfang", "glade",
                                                           "power"]
    assert all(e["position"] == "before_char" for e in books[0]["entries"])
    assert _exported(client, persona["id"])["data"]["character_book"] == BOOK
    chunks = _exported(client, persona["id"], "png")
    assert chunks["ccv3"]["data"]["character_book"] == BOOK
    assert chunks["chara"]["data"]["character_book"] == BOOK


def test_the_export_carries_our_edits_and_keeps_every_other_field(client):
    persona = _import(client)
    book = client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"][0]
    first, second, third, _ = book["entries"]
    assert client.patch(f"/api/world-books/{book['id']}/entries/{first['id']}", json={
        "content": "Eldoria is a forest.", "keys": ["eldoria", "woods"],
        "position": "after_char", "case_sensitive": True,
        "selective": True, "secondary_keys": ["Seraphina"], "selective_logic": "and_all",
    }).status_code == 200
    assert client.delete(f"/api/world-books/{book['id']}/entries/{second['id']}") \
        .status_code == 200
    assert client.patch(f"/api/world-books/{book['id']}", json={
        "scan_depth": 4, "token_budget": 900, "recursive_scanning": True}).status_code == 200
    added = client.post(f"/api/world-books/{book['id']}/entries", json={
        "keys": ["moon"], "content": "The moon is near.", "constant": True}).get_json()
    exported = _exported(client, persona["id"])["data"]["character_book"]
    expected = copy.deepcopy(BOOK)
    edited = expected["entries"][0]
    edited.update(content="Eldoria is a forest.", keys=["eldoria", "woods"],
                  position="after_char", case_sensitive=True, selective=True,
                  secondary_keys=["Seraphina"])
    edited["extensions"].update(position=1, selectiveLogic=3)
    del expected["entries"][1]
    expected.update(scan_depth=4, token_budget=900, recursive_scanning=True)
    expected["entries"].append({
        "id": 4, "keys": ["moon"], "secondary_keys": [], "comment": "",
        "content": "The moon is near.", "constant": True, "selective": False,
        "insertion_order": 100, "enabled": True, "position": "before_char",
        "case_sensitive": False, "extensions": {}})
    assert exported == expected
    assert added["id"] not in (first["id"], second["id"], third["id"])


def test_a_book_that_is_not_a_list_of_entries_is_kept_in_the_card(client):
    card = copy.deepcopy(SERAPHINA)
    card["data"]["character_book"] = {"name": "odd", "entries": "none"}
    persona = _import(client, card)
    assert client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"] == []
    assert persona["card"]["character_book"] == {"name": "odd", "entries": "none"}
    assert _exported(client, persona["id"])["data"]["character_book"] == \
        {"name": "odd", "entries": "none"}


def test_books_kept_in_cards_before_migration_0040_become_own_books():
    with tempfile.TemporaryDirectory() as work, \
            closing(sqlite3.connect(Path(work) / "app.db")) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, "
                     "applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
        for path in sorted(storage.MIGRATIONS_DIR.glob("*.sql")):
            if path.stem >= "0040":
                continue
            for statement in storage._statements(path.read_text(encoding="utf-8")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (path.stem,))
        card = {"creator": "x", "character_book": BOOK}
        for pid, value in (("aaaaaaaa", card), ("bbbbbbbb", {"character_book": {"entries": 3}})):
            conn.execute("INSERT INTO personas (id, name, card, created_at, updated_at) "
                         "VALUES (?, ?, ?, '2025-01-01', '2025-01-01')",
                         (pid, pid, json.dumps(value)))
        conn.commit()
        assert storage.migrate(conn)[0] == "0040_world_info"
        books = conn.execute("SELECT id, persona_id, data FROM world_books").fetchall()
        assert [(b[1], json.loads(b[2])) for b in books] == [("aaaaaaaa", {"name": "Eldoria"})]
        entries = [json.loads(r[0]) for r in conn.execute(
            "SELECT data FROM world_entries WHERE book_id = ? ORDER BY position", (books[0][0],))]
        assert entries == BOOK["entries"]
        assert conn.execute("SELECT persona_id, book_id FROM persona_world_books").fetchall() \
            == [("aaaaaaaa", books[0][0])]
        cards = dict(conn.execute("SELECT id, card FROM personas WHERE id != 'default'"))
        assert json.loads(cards["aaaaaaaa"]) == {"creator": "x"}
        assert json.loads(cards["bbbbbbbb"]) == {"character_book": {"entries": 3}}


def test_a_backup_holds_the_books(client):
    persona = _import(client)
    shared = client.post("/api/world-books", json={"name": "Shared"}).get_json()
    client.put(f"/api/personas/{persona['id']}/world-books/{shared['id']}")
    response = client.get("/api/backup")
    assert response.status_code == 200
    with tempfile.TemporaryDirectory() as work:
        with zipfile.ZipFile(io.BytesIO(response.data)) as archive:
            archive.extract("app.db", work)
        with closing(sqlite3.connect(Path(work) / "app.db")) as conn:
            assert conn.execute("SELECT COUNT(*) FROM world_entries").fetchone()[0] == 4
            assert sorted(conn.execute("SELECT book_id FROM persona_world_books "
                                       "WHERE persona_id = ?", (persona["id"],))) == \
                sorted([(b,) for b in (shared["id"], 1)])


def test_saving_an_entry_unchanged_changes_nothing_in_the_export(client):
    persona = _import(client)
    book = client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"][0]
    for entry in book["entries"]:
        body = {k: v for k, v in entry.items() if k not in ("id", "book_id")}
        assert client.patch(f"/api/world-books/{book['id']}/entries/{entry['id']}",
                            json=body).status_code == 200
    assert _exported(client, persona["id"])["data"]["character_book"] == BOOK


def test_a_card_with_more_entries_than_a_book_holds_is_refused(client, snapshot):
    """Every entry is read at every turn: a 2 MB card of 60,000 tiny entries cost each chat
    turn a second of the worker's loop before the import held it to the book's limit."""
    from src.utils.limits import WORLD_LISTS
    entries = [{"keys": ["."], "content": "x"} for _ in range(WORLD_LISTS["entries"] + 1)]
    card = copy.deepcopy(SERAPHINA)
    card["data"]["character_book"]["entries"] = entries
    before = snapshot()
    for path in ("/api/personas/import?preview=1", "/api/personas/import"):
        response = upload(client, json.dumps(card).encode(), path, filename="card.json")
        assert response.status_code == 413, response.get_json()
        assert response.get_json()["error"]["reason"] == "too_many_entries"
    assert snapshot() == before
    card["data"]["character_book"]["entries"] = entries[:-1]
    persona = _import(client, card)
    books = client.get(f"/api/personas/{persona['id']}/world-books").get_json()["books"]
    assert len(books[0]["entries"]) == WORLD_LISTS["entries"]
