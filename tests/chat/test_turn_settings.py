"""A chat turn reads each setting once (issue #23): its prompt reads the general and the cortex
settings in one statement and the default user persona once (`SettingsService.turn`), and only
when the `config` change counter moved since the process last read them
(`storage/generations.py`, tests/chat/test_turn_config_cache.py); the endpoint read before every
request reads no user persona, and the cortex trigger after the turn reads the counter with its
counts in one statement and takes the settings the prompt kept. What another process changed
shows in the next read."""
import itertools
import json

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.cortex.settings import load_cortex_settings
from src.utils.storage import settings_store
from tests.chat.chat_support import API_KEY, chat_requests, live_config
from tests.fakes.claude import FakeClaude, replies
from tests.support.sql_trace import traced

OTHER_KEY = "sk-ant-api03-another-process-key-0123456789OTHR"


def _put(client, path: str, **body) -> None:
    response = client.put(path, json=body)
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("about_you", [False, True])
@pytest.mark.parametrize("changes", [
    {},
    {"app": {"context_limit": 12, "user_name": "Sam", "language": "de", "max_tokens": 300},
     "cortex": {"enabled": False, "frequency": "rare"}},
])
def test_a_turns_settings_are_each_read_once_and_agree_with_every_read(app, client, changes,
                                                                        about_you):
    if about_you:
        assert client.post("/api/user-personas", json={"name": "Alex"}).status_code == 201
    if changes:
        _put(client, "/api/settings", **changes["app"])
        _put(client, "/api/cortex/settings", **changes["cortex"])
    settings = provider.get_settings_service(app)
    conn = provider.get_db(app).conn()
    turn, seen = traced(conn, settings.turn)
    assert len(seen) == 3 and "generations" in seen[0], seen  # the counter, then the rows
    again, seen = traced(conn, settings.turn)
    assert len(seen) == 1 and "generations" in seen[0], seen  # unchanged: kept
    assert again == turn
    assert turn.app == settings.values()
    assert turn.cortex == load_cortex_settings(conn)
    default_id = provider.get_user_persona_service(app).list().default_id
    assert (turn.default_user.id if turn.default_user else None) == default_id
    assert (default_id is not None) == about_you
    if about_you:
        assert turn.default_user.name == turn.app.user_name


def test_a_turn_sees_what_changed_since_the_last_one(app, client):
    assert client.post("/api/user-personas", json={"name": "Alex"}).status_code == 201
    settings = provider.get_settings_service(app)
    before = settings.turn()
    _put(client, "/api/settings", context_limit=8, user_name="Kim")
    _put(client, "/api/cortex/settings", enabled=not before.cortex.enabled)
    after = settings.turn()
    assert (after.app.context_limit, after.app.user_name) == (8, "Kim")
    assert after.default_user.name == "Kim" and after.cortex.enabled is not before.cortex.enabled


def test_the_endpoint_read_before_each_request_reads_only_the_settings_row(app, client):
    _put(client, "/api/settings", context_window=50_000)
    settings = provider.get_settings_service(app)
    connection, seen = traced(provider.get_db(app).conn(), settings.connection)
    assert len(seen) == 1 and "user_personas" not in seen[0], seen
    values = settings.values()
    assert (connection.provider, connection.base_url, connection.context_window) == (
        values.provider, values.base_url, 50_000)
    turns, seen = traced(provider.get_db(app).conn(), lambda: settings.connection(values))
    assert turns == connection and seen == []  # a chat turn's: from the settings it read


def _turn(client) -> tuple[str, dict]:
    """One chat turn in a new session: its final SSE event."""
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()
    body = client.post("/api/chat/stream", json={"session_id": session["id"],
                                                 "message": "Hi"}).get_data(as_text=True)
    return next((line[7:], json.loads(data[6:])) for line, data in
                itertools.pairwise(body.splitlines()) if line in ("event: done", "event: error"))


def test_the_endpoint_another_process_set_is_the_next_turns(app_config, claude, key_hygiene):
    """A chat turn's request goes where the settings its prompt read say, with the key that
    belongs there now (issue 23: the settings are not read again before the request): what a
    second app on the same data directory (another process) changed, the settings or the
    key, is honoured from the first app's very next turn."""
    key_hygiene.add_secret(API_KEY)
    key_hygiene.add_secret(OTHER_KEY)
    claude.default = replies.text("Hello.")
    config = live_config(app_config, claude)
    first, second = create_app(config), create_app(config)
    try:
        chat, other_process = first.test_client(), second.test_client()
        assert _turn(chat)[0] == "done" and len(chat_requests(claude)) == 1
        _put(other_process, "/api/settings", context_window=512, max_tokens=600)
        kind, data = _turn(chat)
        assert (kind, data["code"]) == ("error", "context_too_small")
        assert len(chat_requests(claude)) == 1
        with FakeClaude(api_key=OTHER_KEY) as elsewhere:
            elsewhere.default = replies.text("From elsewhere.")
            _put(other_process, "/api/settings", base_url=elsewhere.url, api_key=OTHER_KEY,
                 context_window=None, max_tokens=300)
            kind, data = _turn(chat)
            assert (kind, data["text"]) == ("done", "From elsewhere.")
            assert len(chat_requests(claude)) == 1
            sent = chat_requests(elsewhere)
            assert sent and sent[-1].headers["authorization"] == f"Bearer {OTHER_KEY}"
            assert sent[-1].body["max_tokens"] == 300
            # the key is not part of the settings' counter: it is read at every turn
            assert other_process.delete("/api/settings/api-key").status_code == 200
            kind, data = _turn(chat)
            assert (kind, data["code"]) == ("error", "not_configured")
            assert len(chat_requests(elsewhere)) == len(sent)
    finally:
        provider.shutdown_services(first)
        provider.shutdown_services(second)


def test_the_trigger_after_a_turn_reads_no_settings_the_turn_read(app, client, env):
    _put(client, "/api/settings", context_limit=20)
    _put(client, "/api/cortex/settings", enabled=True, frequency="frequent")
    persona = client.post("/api/personas", json={"name": "Mira"}).get_json()
    session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    trigger = provider.get_cortex_trigger(app)
    provider.get_settings_service(app).turn()  # the turn's prompt: the settings are kept
    state, seen = traced(provider.get_db(app).conn(),
                          lambda: trigger.check_and_trigger(persona["id"], session["id"]))
    assert len(seen) == 1 and "generations" in seen[0] and "settings" not in seen[0], seen
    assert (state["triggered"], state["threshold"], state["frequency"], state["enabled"]) == (
        False, 10, "frequent", True)
    _put(client, "/api/cortex/settings", enabled=False)
    assert trigger.check_and_trigger(persona["id"], session["id"])["enabled"] is False


def test_an_unchanged_row_is_checked_once_and_a_changed_one_anew(app, caplog):
    """The row is read every time, its fields checked once per stored text (a turn reads it
    for the prompt and again for the request): a stored value the checks refuse is reported
    once, not on every read, and a new text is checked again."""
    settings = provider.get_settings_service(app)
    db = provider.get_db(app)
    with db.transaction() as conn:
        settings_store.save_app(conn, {"context_limit": 2, "max_tokens": 300})
    caplog.clear()
    first, again, endpoint = settings.turn().app, settings.values(), settings.connection()
    assert (first.context_limit, first.max_tokens) == (40, 300) and again == first
    assert endpoint.context_window is None
    refused = [r for r in caplog.records if r.getMessage().startswith("Ignoring invalid")]
    assert [r.getMessage() for r in refused] == ["Ignoring invalid stored setting context_limit"]
    first.max_tokens = 1  # the caller's copy
    assert settings.values().max_tokens == 300
    with db.transaction() as conn:
        settings_store.save_app(conn, {"context_limit": 3, "max_tokens": 500})
    caplog.clear()
    assert settings.values().max_tokens == 500
    assert len([r for r in caplog.records if r.getMessage().startswith("Ignoring")]) == 1
