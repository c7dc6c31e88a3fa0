"""The chat bench's second floor (bench/lean_store.py `AppStore`, issue #23) runs the SQL of a
steady app chat turn, statement for statement and in order: it stands for the app's storage
work, so it must not drift from the app silently (a statement the app gains or loses fails
this test until the floor follows)."""
import json
import re

import pytest

from bench.lean_store import AppStore
from src.utils import provider
from src.utils.api_request.types import SentRequest
from src.utils.storage import search
from tests.chat.chat_support import chat_requests, eventually, live_config, ok
from tests.support.sql_trace import traced_pool

LITERAL = re.compile(r"X'[0-9A-Fa-f]*'|'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b|\bNULL\b")
# FTS5's own reads of its configuration (traced without "--" when a statement is prepared).
FTS_OWN = re.compile(r"PRAGMA '[^']*'\.data_version|SELECT k, v FROM '[^']*'\.'[^']*_config'")


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def shapes(statements: list[str]) -> list[str]:
    """The statements as templates: the FTS index's own steps (traced with a leading "--",
    and its configuration reads, `FTS_OWN`, which it makes when a statement reaching it is
    prepared on a connection, so they depend on which connection a turn took) and the repeats
    SQLite traces per trigger step dropped, every value (text, number, blob, NULL) written as
    `?`, spaces collapsed."""
    real = [s for s in statements if not s.startswith("--") and not FTS_OWN.fullmatch(s)]
    kept = [s for i, s in enumerate(real) if i == 0 or s != real[i - 1]]
    return [" ".join(LITERAL.sub("?", s).split()) for s in kept]


def _app_turn(client, session_id: str) -> None:
    response = client.post("/api/chat/stream", json={"session_id": session_id,
                                                     "message": "Hi!"})
    assert b"event: done" in response.get_data()


def _steady_app_turn(app, client, rows, session_id: str) -> list[str]:
    """The statements of an app turn once nothing of the session is new: its title stored
    (asked for after the first turn) and the persona's cortex text kept by the process (not
    while its files are younger than prompt_cache's RACY_SECONDS), so the prompt reads no
    cortex revisions."""
    db = provider.get_db(app)

    def turn() -> list[str] | None:
        titled = rows("SELECT title FROM sessions WHERE id = ?", session_id)[0]["title"]
        with db.transaction() as conn:  # nothing waits for the search index, so this turn's
            search.index_waiting(conn)  # end does not index a batch (the floor's turns don't)
        db.close_thread()
        with traced_pool(db) as seen:
            _app_turn(client, session_id)
        steady = titled and not any("cortex_revisions WHERE" in s for s in seen)
        return list(seen) if steady else None
    return eventually(turn)


def _floor_turn(store: AppStore, body: dict) -> None:
    opened = store.start("7", "Hi!")
    sent = SentRequest("anthropic", body["model"], json.dumps(body).encode())
    store.finish(opened, "Default reply.", sent, {"output_tokens": 3}, body["system"])


def test_the_app_store_floor_runs_the_statements_of_a_steady_app_turn(app, client, claude,
                                                                       script, rows, tmp_path):
    # a threshold the waiting turns do not reach (a turn that queues an update is no steady one)
    ok(client.put("/api/settings", json={"context_limit": 400}))
    persona = ok(client.post("/api/personas", json={"name": "Mira"}), 201)
    session = ok(client.post("/api/sessions", json={"persona_id": persona["id"]}), 201)
    _app_turn(client, session["id"])
    app_turn = _steady_app_turn(app, client, rows, session["id"])

    store = AppStore(str(tmp_path / "floor.db"))
    body = chat_requests(claude)[-1].body
    try:
        with traced_pool(store.db) as seen:
            _floor_turn(store, body)  # the session's first turn (its branch starts), on the
            first = len(seen)         # connection the next one takes (SQLite's FTS index
            _floor_turn(store, body)  # reads its configuration once per connection)
    finally:
        store.db.close()
    floor_turn = seen[first:]

    assert shapes(floor_turn) == shapes(app_turn)
    assert len(shapes(app_turn)) >= 15  # both saw a whole turn: two write transactions

