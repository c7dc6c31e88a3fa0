"""A chat turn ends with one write that stores the reply's text, what its prompt held and the
request it was sent as (issue #23: one statement each, the persona+cortex prefix's bytes not sent
again while that prefix is stored), and the record is still exact when the prefix went with the
last reply that used it, or when a continued reply is recorded again."""
import json
import os

import pytest

from src.utils.storage import Database, messages, personas, prompt_records, sessions

SID = "t" * 16
PREFIX = "You are Mira. " * 20
FIRED = {"book_id": 1, "entry_id": 2, "name": "Harbour", "key": "harbour", "constant": False,
         "position": "after_char", "order": 100, "tokens": 4, "content": "The harbour is old."}


@pytest.fixture
def db(data_dir):
    database = Database(os.path.join(data_dir, "app.db"))
    database.open()
    with database.transaction() as conn:
        personas.create_persona(conn, "tend0001", {"name": "Mira"})
        sessions.create_session(conn, SID, "tend0001")
    yield database
    database.close_thread()


def _body(prefix: str, text: str) -> tuple[bytes, tuple[int, int]]:
    """A request body and the byte span of its first system text."""
    head = b'{"system":[{"type":"text","text":"'
    body = head + prefix.encode() + f'"}}],"messages":[{json.dumps(text)}]}}'.encode()
    return body, (len(head), len(head) + len(prefix.encode()))


def _end(db, reply_id: int, text: str, prefix: str = PREFIX,
         sources: tuple = ({"memory.md": 3}, [FIRED])) -> bytes:
    """The reply's final transaction as the chat writes it; answers the body recorded."""
    body, span = _body(prefix, text)
    with db.transaction() as conn:
        messages.finish_reply(conn, reply_id, text, "complete", "end_turn", None, sources)
        prompt_records.save(conn, reply_id, "anthropic", "m", [{"label": "persona"}], body,
                            span, {"input_tokens": 3})
    return body


def _reply(db, text: str = "Hi") -> int:
    with db.transaction() as conn:
        return messages.add_exchange(conn, SID, text)[1]["id"]


def _traced(conn, action) -> list[str]:
    """The statements `action` runs (see test_append_fast_path: the FTS index's own start
    with "--", and an insert or update is traced again per trigger step)."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    real = [s for s in seen if not s.startswith("--")]
    return [s for i, s in enumerate(real) if i == 0 or s != real[i - 1]]


def test_a_turn_with_a_stored_prefix_ends_in_one_short_write(db):
    conn = db.conn()
    _end(db, _reply(db), "first")  # stores the prefix
    reply_id = _reply(db)
    body: list[bytes] = []
    seen = _traced(conn, lambda: body.append(_end(db, reply_id, "second")))
    # the reply, the session's time, how many messages wait for the search index (a batch is
    # indexed once 32 do, migration 0048), the record
    assert [s.split()[0] for s in seen] == ["BEGIN", "UPDATE", "UPDATE", "SELECT", "INSERT",
                                            "COMMIT"]
    assert "messages_fts_pending" in seen[3]
    assert not any("prompt_prefixes (" in s for s in seen)  # the prefix's bytes stay home
    stored = messages.get_message(conn, reply_id)
    assert (stored.content, stored.status, stored.streaming) == ("second", "complete", False)
    assert stored.cortex_revisions == {"memory.md": 3}
    assert [entry.model_dump() for entry in stored.world_info] == [FIRED]
    record = prompt_records.load(conn, reply_id)
    assert record is not None and record.body == body[0] and record.usage == {"input_tokens": 3}


def test_a_turn_without_cortex_or_world_info_stores_none_of_them(db):
    reply_id = _reply(db)
    _end(db, reply_id, "plain", sources=(None, []))
    row = db.conn().execute("SELECT cortex_revisions, world_info FROM messages WHERE id = ?",
                            (reply_id,)).fetchone()
    assert tuple(row) == (None, None)


def test_a_prefix_that_went_with_its_last_reply_is_stored_again(db):
    """Deleting the only reply that used a prefix drops it (the table's trigger); the next
    reply with that prefix stores it again, so its record is whole."""
    conn = db.conn()
    first = _reply(db)
    _end(db, first, "first")
    with db.transaction():
        messages.delete_message(conn, first - 1)  # the person's message and its reply
    assert conn.execute("SELECT COUNT(*) FROM prompt_prefixes").fetchone()[0] == 0
    second = _reply(db)
    body = _end(db, second, "second")
    assert prompt_records.load(conn, second).body == body


def test_a_continued_reply_is_recorded_anew_and_its_old_prefix_goes(db):
    conn = db.conn()
    reply_id = _reply(db)
    _end(db, reply_id, "first")
    body = _end(db, reply_id, "first, continued", prefix="You are Mira, changed. " * 10)
    assert prompt_records.load(conn, reply_id).body == body
    assert conn.execute("SELECT COUNT(*) FROM prompt_prefixes").fetchone()[0] == 1
    body = _end(db, reply_id, "first, continued twice", prefix="You are Mira, changed. " * 10)
    assert prompt_records.load(conn, reply_id).body == body
