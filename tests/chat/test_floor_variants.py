"""The storage floors for fewer commits (bench/lean_store.py `MergedStore`, `GroupedStore`,
issue #23) store what the app's storage floor (`AppStore`) stores: the same rows, in fewer
transactions. Otherwise bench/store_cpu.py would compare work that differs."""
import json
import threading
import time

from bench.lean_store import AppStore, GroupedStore, MergedStore, Opened
from src.utils.api_request.types import SentRequest
from tests.support.sql_trace import traced_pool

KEYS = ("1", "2", "3")
SYSTEM_SHAPE = [{"type": "text", "text": "You are Lean, a patient companion. " * 4,
                 "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "The current date and time: Saturday, 28 November 2026."}]
TURNS = 2


def _body(opened: Opened) -> SentRequest:
    body = {"model": "m", "max_tokens": 64, "system": SYSTEM_SHAPE,
            "messages": [*opened.history, {"role": "user", "content": "Hi!"}]}
    return SentRequest("anthropic", "m", json.dumps(body).encode())


def _rows(store: AppStore) -> list[tuple]:
    """Every stored turn, by session and position: the texts, states and prompt records."""
    conn = store.db.conn()
    try:
        found = conn.execute(
            "SELECT m.session_id, m.role, m.content, m.status, m.streaming, m.stop_reason, "
            "m.cortex_revisions, m.on_branch, p.provider, p.model, p.layout, "
            "p.prefix_hash IS NOT NULL, length(p.rest) > 0, p.usage, "
            "m.id = s.active_leaf_id "
            "FROM messages m JOIN sessions s ON s.id = m.session_id "
            "LEFT JOIN reply_prompts p ON p.message_id = m.id ORDER BY m.session_id, m.id")
        return [tuple(row) for row in found]
    finally:
        store.db.close_thread()


def _run_turns(store: AppStore, key: str) -> None:
    for n in range(TURNS):
        opened = store.start(key, f"Hi {n}!")
        store.finish(opened, f"Reply {n}.", _body(opened), {"output_tokens": 3}, SYSTEM_SHAPE)


def _concurrent(store: AppStore) -> None:
    """Each key's turns on a thread of its own, all at once."""
    threads = [threading.Thread(target=_run_turns, args=(store, key)) for key in KEYS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive()


def _stored(make, tmp_path, name: str, drive=_concurrent) -> list[tuple]:
    store = make(str(tmp_path / f"{name}.db"))
    try:
        drive(store)
        return _rows(store)
    finally:
        store.db.close()


def test_the_merged_store_leaves_the_rows_of_the_app_store(tmp_path):
    expected = _stored(AppStore, tmp_path, "app")
    assert len(expected) == len(KEYS) * TURNS * 2
    replies = [row for row in expected if row[1] == "assistant"]
    assert all(row[2].startswith("Reply") and row[8] == "anthropic" and row[4] == 0
               for row in replies)  # the final text and the prompt record of every reply
    assert _stored(MergedStore, tmp_path, "merged") == expected


def test_the_merged_store_runs_two_transactions_a_turn(tmp_path):
    store = MergedStore(str(tmp_path / "merged.db"))
    try:
        _run_turns(store, "1")  # the session exists, its branch started
        with traced_pool(store.db) as seen:
            _run_turns(store, "1")
    finally:
        store.db.close()
    assert sum(s == "BEGIN IMMEDIATE" for s in seen) == 2 * TURNS
    first_write = seen.index("BEGIN IMMEDIATE")
    assert seen[first_write + 1].startswith("SELECT")  # the session read inside the start's


def test_the_grouped_store_commits_turns_ending_together_once_with_the_same_rows(tmp_path):
    expected = _stored(AppStore, tmp_path, "app")
    stores: list[GroupedStore] = []

    def until_all_queued() -> None:  # the first to finish waits for the others' turns
        deadline = time.monotonic() + 20
        while stores[0].queued() < len(KEYS) and time.monotonic() < deadline:
            time.sleep(0.001)

    def make(path: str) -> GroupedStore:
        stores.append(GroupedStore(path, gather=until_all_queued))
        return stores[0]

    def lockstep(store: GroupedStore) -> None:
        """Every key's turn starts, then all finish at once, `TURNS` times."""
        for n in range(TURNS):
            opened = {key: store.start(key, f"Hi {n}!") for key in KEYS}
            store.db.close_thread()
            with traced_pool(store.db) as seen:
                threads = [threading.Thread(target=store.finish, args=(
                    opened[key], f"Reply {n}.", _body(opened[key]), {"output_tokens": 3},
                    SYSTEM_SHAPE)) for key in KEYS]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(30)
                    assert not thread.is_alive()
            assert sum(s == "BEGIN IMMEDIATE" for s in seen) == 1  # one commit for all

    assert _stored(make, tmp_path, "grouped", lockstep) == expected


def test_a_failed_group_commit_releases_every_waiting_turn_with_its_error(tmp_path):
    store: GroupedStore | None = None

    def until_all_queued() -> None:
        deadline = time.monotonic() + 20
        while store is not None and store.queued() < len(KEYS) and time.monotonic() < deadline:
            time.sleep(0.001)

    store = GroupedStore(str(tmp_path / "grouped.db"), gather=until_all_queued)
    try:
        opened = {key: store.start(key, "Hi!") for key in KEYS}
        store.db.close_thread()
        errors: list[BaseException] = []

        def finish(key: str) -> None:
            try:  # a lone surrogate cannot be bound: the group's transaction fails
                store.finish(opened[key], "\ud800" if key == KEYS[-1] else "Reply.", None,
                             None, SYSTEM_SHAPE)
            except Exception as err:
                errors.append(err)
        threads = [threading.Thread(target=finish, args=(key,)) for key in KEYS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
            assert not thread.is_alive()  # no turn waits for a commit that never comes
        assert len(errors) == len(KEYS)
        assert all(row[4] == 1 for row in _rows(store) if row[1] == "assistant")  # none stored
    finally:
        store.db.close()
