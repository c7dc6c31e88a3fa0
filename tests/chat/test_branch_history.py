"""The prompt's history (`tree.path_messages`): a message on the active branch is read from the
branch cache (`on_branch`, newest first by the session's index, so a turn reads `limit` rows
however long the conversation is), any other message by walking its ancestors; both give the
path from the root, with alternatives and other sessions left out."""
import os

import pytest

from src.utils.storage import Database, messages, personas, sessions, tree

SID, OTHER = "h" * 16, "o" * 16


@pytest.fixture
def db(data_dir):
    database = Database(os.path.join(data_dir, "app.db"))
    database.open()
    with database.transaction() as conn:
        personas.create_persona(conn, "hist0001", {"name": "Mira"})
        sessions.create_session(conn, SID, "hist0001")
        sessions.create_session(conn, OTHER, "hist0001")
    yield database
    database.close_thread()


def _walked(conn, message_id: int, limit: int) -> list[tuple]:
    """The reference: the ancestors by the recursive walk, as (id, role, content)."""
    rows = conn.execute(tree._PATH + "SELECT m.id, m.role, m.content FROM messages m JOIN path p "
                        "ON m.id = p.id ORDER BY m.id DESC LIMIT ?", (message_id, limit))
    return [tuple(row) for row in reversed(rows.fetchall())]


def _add(conn, session_id: str, role: str, text: str, **parent) -> int:
    return messages.add_message(conn, session_id, role, text, **parent)["id"]


def test_every_message_reads_its_own_path_on_and_off_the_branch(db):
    conn = db.conn()
    with db.transaction():
        ids = [_add(conn, SID, role, f"{role} {i}")
               for i in range(6) for role in ("user", "assistant")]
        _add(conn, OTHER, "user", "elsewhere")
        alternative = _add(conn, SID, "assistant", "another answer", parent_id=ids[6])
        _add(conn, SID, "user", "on the alternative")
        tree.set_active(conn, SID, ids[-1], "switch")  # back to the first branch
        _add(conn, SID, "user", "newest")
    every = [row["id"] for row in conn.execute("SELECT id FROM messages WHERE session_id = ?",
                                               (SID,))]
    assert messages.is_on_branch(conn, ids[-1]) and not messages.is_on_branch(conn, alternative)
    for message_id in every:
        for limit in (1, 3, 40):
            assert tree.path_messages(conn, message_id, limit) == _walked(conn, message_id,
                                                                           limit)


def test_a_turn_on_the_branch_reads_no_ancestors_one_by_one(db):
    conn = db.conn()
    with db.transaction():
        leaf = [_add(conn, SID, role, "x") for _ in range(30) for role in ("user", "assistant")][-1]
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        path = tree.path_messages(conn, leaf, 40)
    finally:
        conn.set_trace_callback(None)
    assert [m.id for m in path] == [m[0] for m in _walked(conn, leaf, 40)]
    assert len(seen) == 1 and "RECURSIVE" not in seen[0]
