"""A chat turn reads the configuration it uses (settings, persona, user persona, world books,
cortex revision ids) only when the change counters moved (issue #23, `storage/generations.py`):
a steady turn's prompt reads the counters and its history, nothing else; and any change, made
through the API or written straight into SQLite by another connection (another process, a
restore, a migration), is in the very next prompt."""
import sqlite3
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.services.chat_prompt import ChatPrompt
from src.utils.storage import messages
from src.utils.storage.generations import CONFIG_TABLES, CORTEX_TABLES, ConfigCache
from tests.chat.chat_support import (
    ChatSocketClient,
    chat_requests,
    lighthouse_world,
    live_config,
    ok,
)
from tests.support.sql_trace import traced


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


CONFIG_READS = ("personas", "settings", "user_personas", "world_books", "world_entries",
                "persona_world_books", "cortex_revisions")


@pytest.fixture
def world(client):
    """`lighthouse_world` with a default user persona (Alex) made first, so Sam is the
    session's own, not the default; returns their ids."""
    ok(client.put("/api/settings", json={"max_tokens": 300}))
    ok(client.put("/api/cortex/settings", json={"frequency": "rare"}))
    ok(client.post("/api/user-personas", json={"name": "Alex"}), 201)  # the default
    world = lighthouse_world(client)
    ok(client.patch(f"/api/sessions/{world['session']}", json={"user_persona_id": world["user"]}))
    return world


def _prompt(app, world, statements: list[str] | None = None):
    """One turn's request: the person's message and its empty reply stored, then the prompt
    built the way the chat builds it, on this thread (its statements added to `statements`)."""
    db = provider.get_db(app)
    with db.transaction() as conn:
        user, reply = messages.add_exchange(conn, world["session"], "Is the lighthouse lit?")
    session = provider.get_chat_service(app).session(world["session"])
    prompt = ChatPrompt(db, provider.get_cortex_service(app), provider.get_settings_service(app),
                        None)
    config, seen = traced(db.conn(), lambda: prompt.config(session, reply["id"], "", user["id"])[0])
    if statements is not None:
        statements.extend(seen)
    return config


def _system(config) -> str:
    return "\n".join(block.text for block in config.system_prompt)


def test_a_steady_turns_prompt_reads_the_counters_and_its_history_and_nothing_else(
        app, client, world):
    ok(client.put("/api/cortex/settings", json={"enabled": False}))  # cortex: test_prompt_cache
    first = _prompt(app, world)
    turn: list[str] = []
    again = _prompt(app, world, turn)
    assert len(turn) == 2 and "FROM generations" in turn[0] and "FROM messages" in turn[1], turn
    assert not [s for s in turn if any(f" {table} " in f" {s} " for table in CONFIG_READS)]
    assert "The lighthouse is red." in _system(again) and "Sam sails." in _system(again)
    assert _system(again) == _system(first) and again.max_tokens == first.max_tokens


API_CHANGES = {
    "settings": (lambda c, w: c.put("/api/settings", json={"max_tokens": 777}),
                 lambda config: config.max_tokens == 777),
    "persona": (lambda c, w: c.put(f"/api/personas/{w['persona']}",
                                   json={"description": "Mira keeps the lighthouse."}),
                lambda config: "Mira keeps the lighthouse." in _system(config)),
    "user persona": (lambda c, w: c.patch(f"/api/user-personas/{w['user']}",
                                          json={"description": "Sam rows."}),
                     lambda config: "Sam rows." in _system(config)),
    "world entry": (lambda c, w: c.patch(f"/api/world-books/{w['book']}/entries/{w['entry']}",
                                         json={"content": "The lighthouse is blue."}),
                    lambda config: "The lighthouse is blue." in _system(config)),
    "book detached": (lambda c, w: c.delete(f"/api/personas/{w['persona']}/world-books/"
                                            f"{w['book']}"),
                      lambda config: "lighthouse is" not in _system(config)),
    "cortex off": (lambda c, w: c.put("/api/cortex/settings", json={"enabled": False}),
                   lambda config: "<cortex_memory>" not in _system(config)),
}


@pytest.mark.parametrize("change", API_CHANGES)
def test_a_change_through_the_api_is_in_the_very_next_prompt(app, client, world, change):
    make, seen_in = API_CHANGES[change]
    before = _prompt(app, world)
    assert not seen_in(before)
    ok(make(client, world))
    assert seen_in(_prompt(app, world))


SQL_CHANGES = {
    "settings": ("UPDATE settings SET value = json_set(value, '$.max_tokens', 555) "
                 "WHERE key = 'app'", lambda config: config.max_tokens == 555),
    "persona": ("UPDATE personas SET description = 'Mira paints boats.' WHERE id = :persona",
                lambda config: "Mira paints boats." in _system(config)),
    "user persona": ("UPDATE user_personas SET description = 'Sam fishes.' WHERE id = :user",
                     lambda config: "Sam fishes." in _system(config)),
    "world entry": ("UPDATE world_entries SET data = json_set(data, '$.content', "
                    "'The lighthouse is green.') WHERE id = :entry",
                    lambda config: "The lighthouse is green." in _system(config)),
    "book detached": ("DELETE FROM persona_world_books WHERE persona_id = :persona",
                      lambda config: "lighthouse is" not in _system(config)),
    "cortex off": ("UPDATE settings SET value = json_set(value, '$.enabled', json('false')) "
                   "WHERE key = 'cortex'", lambda config: "<cortex_memory>" not in _system(config)),
}


@pytest.mark.parametrize("change", SQL_CHANGES)
def test_a_change_another_process_wrote_into_sqlite_is_in_the_very_next_prompt(
        app, client, world, data_dir, change):
    sql, seen_in = SQL_CHANGES[change]
    assert not seen_in(_prompt(app, world))
    with closing(sqlite3.connect(data_dir / "app.db")) as other:
        assert other.execute(sql, world).rowcount == 1
        other.commit()
    assert seen_in(_prompt(app, world))


def test_the_trigger_after_a_turn_sees_the_cortex_switched_off_meanwhile(app, client, world,
                                                                         data_dir):
    """The trigger takes the settings the turn's prompt kept, unless they changed while the
    reply streamed (here: by another process)."""
    ok(client.put("/api/cortex/settings", json={"enabled": True}))
    _prompt(app, world)
    trigger = provider.get_cortex_trigger(app)
    assert trigger.check_and_trigger(world["persona"], world["session"])["enabled"] is True
    with closing(sqlite3.connect(data_dir / "app.db")) as other:
        other.execute("UPDATE settings SET value = json_set(value, '$.enabled', json('false')) "
                      "WHERE key = 'cortex'")
        other.commit()
    state = trigger.check_and_trigger(world["persona"], world["session"])
    assert (state["enabled"], state["job_id"], state["triggered"]) == (False, None, False)


def test_every_table_a_turn_keeps_rows_of_raises_its_counter_on_every_change(app):
    """A migration that rebuilds one of these tables drops its triggers: this names it."""
    conn = provider.get_db(app).conn()
    found = {(row["tbl_name"], row["sql"].split()[4]) for row in conn.execute(
        "SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger' "
        "AND sql LIKE '%UPDATE generations SET%'")}
    expected = {(table, event) for table in (*CONFIG_TABLES, *CORTEX_TABLES)
                for event in ("INSERT", "UPDATE", "DELETE")}
    assert expected <= found, sorted(expected - found)


def test_the_cache_keeps_values_of_the_newest_counter_only():
    cache = ConfigCache()
    loads: list[str] = []

    def load(value: str):
        return lambda: loads.append(value) or value
    assert cache.get(5, "k", load("five")) == "five"
    assert cache.get(5, "k", load("again")) == "five"  # kept
    assert cache.get(4, "k", load("older")) == "older"  # a turn that read the counter earlier
    assert cache.get(5, "k", load("again")) == "five"  # ... left the newest alone
    assert cache.get(6, "k", load("six")) == "six"
    assert cache.get(6, "k", load("again")) == "six"
    assert loads == ["five", "older", "six"]


def test_over_the_socket_the_next_turn_uses_what_changed_since_the_last(
        server, app, client, claude, script, world, data_dir):
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(world["session"], "Is the lighthouse lit?")
        ok(client.put(f"/api/personas/{world['persona']}", json={"name": "Nora"}))
        ws.chat(world["session"], "And now?")
        with closing(sqlite3.connect(data_dir / "app.db")) as other:
            other.execute("UPDATE user_personas SET description = 'Sam fishes.' WHERE id = ?",
                          (world["user"],))
            other.commit()
        ws.chat(world["session"], "And the lighthouse?")
    first, second, third = ("\n".join(block["text"] for block in request.system)
                            for request in chat_requests(claude))
    assert first.startswith("You are Mira") and second.startswith("You are Nora")
    assert "Sam sails." in second and "Sam fishes." in third
