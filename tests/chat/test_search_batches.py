"""The search index takes new text in batches (migration 0048, storage/search.py): what waits
is indexed at a turn's end once a batch waits, at an import's end and before every search, and
the index always holds exactly the messages that do not wait, with their current text."""
import random
import sqlite3
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.storage import search
from src.utils.storage.messages import add_message, delete_message, update_message
from tests.chat.chat_support import live_config, ok
from tests.fakes.claude import replies
from tests.portability.support import ST_CHAT, upload


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _waiting(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM messages_fts_pending").fetchone()[0]


def _exact(conn: sqlite3.Connection) -> None:
    """FTS5's own check of the index against the messages table (rank 1: row by row)."""
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def _found(client, q: str) -> list[int]:
    response = client.get("/api/search", query_string={"persona_id": "default", "q": q})
    assert response.status_code == 200, response.get_json()
    return [r["message_id"] for r in response.get_json()["results"]]


def _turn(client, session_id: str, text: str) -> None:
    response = client.post("/api/chat/stream", json={"session_id": session_id, "message": text})
    assert response.status_code == 200 and b"event: done" in response.get_data()


def test_a_turns_messages_wait_until_a_search_indexes_them(client, app, claude, make_session):
    conn = provider.get_db(app).conn()
    session = make_session()
    claude.default = replies.text("Lighthouses guide ships.")
    _turn(client, session["id"], "Tell me about lighthouses.")
    assert _waiting(conn) == 2  # the person's message and the reply, not yet indexed
    assert len(_found(client, "lighthouses")) == 2
    assert _waiting(conn) == 0
    _exact(conn)


def test_a_turns_end_indexes_everything_once_a_batch_waits(client, app, claude, make_session):
    conn = provider.get_db(app).conn()
    session = make_session()
    claude.default = replies.text("Noted.")
    for n in range(search.PENDING_BATCH // 2 - 1):
        _turn(client, session["id"], f"Pebble number {n}.")
    assert _waiting(conn) == search.PENDING_BATCH - 2
    _turn(client, session["id"], "The last pebble.")  # its two messages make the batch
    assert _waiting(conn) == 0
    _exact(conn)
    hits = conn.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'pebble'")
    assert hits.fetchone()[0] == search.PENDING_BATCH // 2


def test_an_import_indexes_its_messages(client, app, data_dir):
    pid = ok(client.post("/api/personas", json={"name": "Seraphina"}), 201)["id"]
    session = ok(upload(client, ST_CHAT, f"/api/personas/{pid}/chats/import",
                        filename="chat.jsonl"), 201)
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        assert _waiting(conn) == 0
        _exact(conn)
        found = conn.execute("SELECT m.session_id FROM messages_fts f JOIN messages m "
                             "ON m.id = f.rowid WHERE messages_fts MATCH 'eldoria'").fetchall()
    assert found and {row[0] for row in found} == {session["id"]}


def test_words_a_message_no_longer_has_are_never_found_waiting_or_indexed(client, app,
                                                                          make_session):
    conn = provider.get_db(app).conn()
    session = make_session()
    indexed = add_message(conn, session["id"], "user", "We talked about tangerines.")
    assert _found(client, "tangerines") == [indexed["id"]]  # indexed now
    waiting = add_message(conn, session["id"], "user", "And about apricots.")
    update_message(conn, indexed["id"], content="We talked about quinces.")
    update_message(conn, waiting["id"], content="And about medlars.")
    assert _waiting(conn) == 2
    assert _found(client, "tangerines") == [] and _found(client, "apricots") == []
    assert _found(client, "quinces") == [indexed["id"]]
    assert _found(client, "medlars") == [waiting["id"]]
    delete_message(conn, indexed["id"])
    assert _found(client, "quinces") == []
    _exact(conn)


def test_any_mix_of_writes_and_batches_keeps_the_index_exact(client, app, make_session):
    """Random inserts, edits, deletes and batches: after each batch FTS5's own check passes,
    and in the end each word finds exactly the stored messages that hold it."""
    conn = provider.get_db(app).conn()
    session = make_session()
    words = ["amber", "birch", "cedar", "dune", "ember", "fjord"]
    rng = random.Random(23)
    for _ in range(300):
        roll = rng.random()
        stored = [row[0] for row in conn.execute("SELECT id FROM messages")]
        text = " ".join(rng.sample(words, 2))
        if roll < 0.45 or not stored:
            add_message(conn, session["id"], "user", text)
        elif roll < 0.75:
            update_message(conn, rng.choice(stored), content=text)
        elif roll < 0.9:
            delete_message(conn, rng.choice(stored))
        else:
            with provider.get_db(app).transaction():
                search.keep_up(conn) if rng.random() < 0.5 else search.index_waiting(conn)
            if _waiting(conn) == 0:
                _exact(conn)
    with provider.get_db(app).transaction():
        search.index_waiting(conn)
    _exact(conn)
    rows = conn.execute("SELECT id, content FROM messages").fetchall()
    for word in words:
        found = {row[0] for row in conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (word,))}
        assert found == {mid for mid, content in rows if word in content.split()}, word
