"""Storing a message where the active branch ends (every chat turn: the person's message, then
the reply) takes the short way: inserted on the branch, the session's leaf and activity time in
one update, nothing logged as retracted or restored. It leaves the tree exactly as moving the
leaf the long way does: `on_branch` is the path from the root to the active leaf, `updated_at`
the newest message's time, and a message stored anywhere else still moves the branch."""
import os

import pytest

from src.utils.storage import Database, messages, personas, sessions, tree


@pytest.fixture
def db(data_dir):
    database = Database(os.path.join(data_dir, "app.db"))
    database.open()
    with database.transaction() as conn:
        personas.create_persona(conn, "apnd0001", {"name": "Mira"})
        sessions.create_session(conn, "s" * 16, "apnd0001")
    yield database
    database.close_thread()


def _state(conn) -> tuple[dict, int | None, str, int]:
    branch = {row["id"]: row["on_branch"] for row in conn.execute(
        "SELECT id, on_branch FROM messages ORDER BY id")}
    session = conn.execute("SELECT active_leaf_id, updated_at FROM sessions").fetchone()
    changes = conn.execute("SELECT COUNT(*) FROM message_changes").fetchone()[0]
    return branch, session["active_leaf_id"], session["updated_at"], changes


def _turn(db, text: str, **parent) -> tuple[dict, dict]:
    """A person's message (under the active leaf, or `parent_id`) and its empty reply."""
    with db.transaction() as conn:
        user = messages.add_message(conn, "s" * 16, "user", text, **parent)
        reply = messages.add_message(conn, "s" * 16, "assistant", "", "incomplete",
                                     parent_id=user["id"], streaming=True)
    return user, reply


def test_a_turn_appends_on_the_branch_in_few_statements(db):
    conn = db.conn()
    first, first_reply = _turn(db, "Hello")
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        user, reply = _turn(db, "Again")
    finally:
        conn.set_trace_callback(None)
    branch, leaf, updated, changes = _state(conn)
    assert branch == dict.fromkeys([first["id"], first_reply["id"], user["id"], reply["id"]], 1)
    assert leaf == reply["id"] and updated == reply["created_at"] and changes == 0
    # SQLite traces an insert again for each trigger step, and the FTS index's own statements
    # start with "--": the statements run are the others, repeats in a row taken once
    real = [s for s in seen if not s.startswith("--")]
    ours = [s for i, s in enumerate(real) if i == 0 or s != real[i - 1]]
    assert [s.split()[0] for s in ours] == ["BEGIN", "SELECT", "INSERT", "UPDATE",
                                            "SELECT", "INSERT", "UPDATE", "COMMIT"], ours


def test_a_message_off_the_end_still_moves_the_branch(db):
    conn = db.conn()
    first, _ = _turn(db, "Hello")
    _turn(db, "Again")
    edited, edited_reply = _turn(db, "Hello, edited", parent_id=None)  # a sibling of the root
    branch, leaf, _, changes = _state(conn)
    assert leaf == edited_reply["id"]
    assert {i for i, on in branch.items() if on} == {edited["id"], edited_reply["id"]}
    assert changes == 4  # the old branch's four messages left it

    back = tree.latest_leaf(conn, first["id"], "s" * 16)
    with db.transaction():
        tree.set_active(conn, "s" * 16, back, "switch")
    with db.transaction():
        reply = messages.add_message(conn, "s" * 16, "assistant", "More", parent_id=back)
    branch, leaf, updated, _ = _state(conn)
    assert leaf == reply["id"] and updated == reply["created_at"]
    assert set(tree.path_ids(conn, leaf)) == {i for i, on in branch.items() if on}
