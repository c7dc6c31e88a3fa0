"""Storing a message where the active branch ends (every chat turn: the person's message, then
the reply) takes the short way: inserted on the branch, the session's leaf and activity time in
one update, nothing logged as retracted or restored. It leaves the tree exactly as moving the
leaf the long way does: `on_branch` is the path from the root to the active leaf, `updated_at`
the newest message's time, and a message stored anywhere else still moves the branch."""
import os

import pytest

from src.utils.storage import Database, messages, personas, sessions, tree


def _database(path: str) -> Database:
    database = Database(path)
    database.open()
    with database.transaction() as conn:
        personas.create_persona(conn, "apnd0001", {"name": "Mira"})
        sessions.create_session(conn, "s" * 16, "apnd0001")
    return database


@pytest.fixture
def db(data_dir):
    database = _database(os.path.join(data_dir, "app.db"))
    yield database
    database.close_thread()


@pytest.fixture
def twin(data_dir):
    """A second database in the same state as `db`, for doing the same thing another way."""
    database = _database(os.path.join(data_dir, "twin.db"))
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


def _statements(conn, action) -> list[str]:
    """The first words of the statements `action` runs. SQLite traces an insert again for each
    trigger step, and the FTS index's own statements start with "--": the statements run are
    the others, repeats in a row taken once."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    real = [s for s in seen if not s.startswith("--")]
    return [s.split()[0] for i, s in enumerate(real) if i == 0 or s != real[i - 1]]


def _tree(conn) -> tuple[list[tuple], int | None, str, list[tuple]]:
    """Everything about the tree but the times: the rows, the leaf, whether the session's
    activity time is its newest message's, and the changes logged."""
    messages_ = [tuple(row) for row in conn.execute(
        "SELECT id, parent_id, role, content, status, streaming, edited, on_branch "
        "FROM messages ORDER BY id")]
    session = conn.execute("SELECT active_leaf_id, updated_at FROM sessions").fetchone()
    newest = conn.execute("SELECT MAX(created_at) FROM messages").fetchone()[0]
    changes = [tuple(row) for row in conn.execute(
        "SELECT message_id, change, cause, replaced_by FROM message_changes ORDER BY id")]
    return messages_, session["active_leaf_id"], session["updated_at"] == newest, changes


def _exchange(db, text: str) -> tuple[dict, dict]:
    with db.transaction() as conn:
        return messages.add_exchange(conn, "s" * 16, text)


def _switch_back(db) -> None:
    """Makes the first message's branch active again (its newest leaf)."""
    conn = db.conn()
    first = conn.execute("SELECT MIN(id) FROM messages").fetchone()[0]
    with db.transaction():
        tree.set_active(conn, "s" * 16, tree.latest_leaf(conn, first, "s" * 16), "switch")


@pytest.mark.parametrize("before", [
    [],  # the session's first message: a root
    ["turn"],
    ["turn", "turn", "edit root", "switch back"],  # the active leaf is not the newest message
    ["turn", "edit root"],
])
def test_a_chat_turns_start_leaves_the_tree_as_two_appends_do(db, twin, before):
    """`add_exchange` (the chat turn's start) stores the same rows, branch, leaf and change log
    as the person's message and its reply stored one after the other."""
    for database in (db, twin):
        for step in before:
            if step == "turn":
                _turn(database, "Hello")
            elif step == "edit root":
                _turn(database, "Hello, edited", parent_id=None)
            else:
                _switch_back(database)
    user, reply = _turn(db, "Again")
    user_twin, reply_twin = _exchange(twin, "Again")
    assert (user_twin["id"], reply_twin["id"]) == (user["id"], reply["id"])
    assert user_twin["parent_id"] == user["parent_id"] and reply_twin["parent_id"] == user["id"]
    assert reply_twin["streaming"] == 1 and reply_twin["status"] == "incomplete"
    assert _tree(twin.conn()) == _tree(db.conn())
    assert _tree(twin.conn())[1] == reply["id"]


def test_a_chat_turns_start_is_two_inserts_and_one_session_update(db):
    """The person's message reads the leaf in its own insert; the session is updated once."""
    _exchange(db, "Hello")
    assert _statements(db.conn(), lambda: _exchange(db, "Again")) == [
        "BEGIN", "INSERT", "INSERT", "UPDATE", "COMMIT"]
    assert _tree(db.conn())[2] is True


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
