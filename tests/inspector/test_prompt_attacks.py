"""The inspector refuses what it cannot show with a clear JSON 4xx, and says "not recorded" for
replies from before it; recorded requests share their persona+cortex prefix and go with their
replies."""
import sqlite3

import pytest

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.world.support import Conversation


def _chat(server, client, claude, persona_name: str = "Mira") -> tuple[dict, dict]:
    persona = client.post("/api/personas", json={"name": persona_name}).get_json()
    talk = Conversation(server, client, claude, persona)
    try:
        done = talk.say("Hello there")
        talk.say("And again")
    finally:
        talk.close()
    return talk.session, done


def _error(response, status: int, code: str) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.is_json and response.get_json()["error"]["code"] == code


@pytest.mark.parametrize("path, code", [
    ("/api/sessions/NOTASESSION/messages/1/prompt", "session_not_found"),
    ("/api/sessions/0123456789abcdef/messages/1/prompt", "session_not_found"),
    ("/api/sessions/..%2F..%2Fetc/messages/1/prompt", "not_found"),
    ("/api/sessions/0123456789abcdef/context", "session_not_found"),
    ("/api/sessions/%F0%9F%92%A9/context", "session_not_found"),
])
def test_unknown_sessions_are_404(client, path, code):
    _error(client.get(path), 404, code)


def test_hostile_message_ids_are_clear_4xx(server, client, claude, script):
    session, done = _chat(server, client, claude)
    base = f"/api/sessions/{session['id']}/messages"
    _error(client.get(f"{base}/999999999/prompt"), 404, "message_not_found")
    _error(client.get(f"{base}/{2**70}/prompt"), 404, "message_not_found")
    _error(client.get(f"{base}/0/prompt"), 404, "message_not_found")
    for bad in ("-1", "abc", "1.5", "%00"):
        response = client.get(f"{base}/{bad}/prompt")
        assert response.status_code == 404 and response.is_json
    user = client.get(f"/api/sessions/{session['id']}").get_json()["messages"][0]
    assert user["role"] == "user"
    _error(client.get(f"{base}/{user['id']}/prompt"), 400, "not_a_reply")
    assert client.post(f"{base}/{done['message_id']}/prompt").status_code in (403, 405)


def test_a_reply_of_another_persona_is_not_found_through_this_session(server, client, claude,
                                                                    script):
    mine, _ = _chat(server, client, claude, "Mira")
    _, theirs = _chat(server, client, claude, "Otto")
    response = client.get(f"/api/sessions/{mine['id']}/messages/{theirs['message_id']}/prompt")
    _error(response, 404, "message_not_found")


def test_a_deleted_session_takes_its_records_and_unused_prefixes(server, client, claude, script,
                                                                 rows):
    session, done = _chat(server, client, claude)
    assert len(rows("SELECT * FROM reply_prompts")) == 2
    assert len(rows("SELECT * FROM prompt_prefixes")) == 1  # both turns share the prefix
    assert client.delete(f"/api/sessions/{session['id']}").status_code in (200, 204)
    _error(client.get(f"/api/sessions/{session['id']}/messages/{done['message_id']}/prompt"),
           404, "session_not_found")
    assert rows("SELECT * FROM reply_prompts") == []
    assert rows("SELECT * FROM prompt_prefixes") == []


def test_a_reply_from_before_recording_says_not_recorded(app, client, make_session):
    session = make_session("default")
    conn = provider.get_db(app).conn()
    user = add_message(conn, session["id"], "user", "Hi")
    old = add_message(conn, session["id"], "assistant", "Hello", parent_id=user["id"])
    shown = client.get(f"/api/sessions/{session['id']}/messages/{old['id']}/prompt").get_json()
    assert shown["recorded"] is False and shown["sections"] == [] and shown["usage"] is None
    meter = client.get(f"/api/sessions/{session['id']}/context").get_json()
    assert meter["used"] is None and meter["reply_id"] is None


def test_a_record_for_a_reply_that_is_gone_leaves_nothing(app, rows):
    from src.utils.storage import prompt_records

    conn = provider.get_db(app).conn()
    body = b'{"system":[{"type":"text","text":"persona"}]}'
    prompt_records.save(conn, 987654, "anthropic", "m", [], body, (30, 37), None)
    assert rows("SELECT * FROM reply_prompts") == []
    assert rows("SELECT * FROM prompt_prefixes") == []


def test_the_count_cache_keeps_the_newest(app, rows):
    from src.utils.storage import prompt_records

    conn = provider.get_db(app).conn()
    for index in range(5):
        prompt_records.store_counts(conn, {f"k{index}": index}, keep=3)
    assert sorted(r["key"] for r in rows("SELECT key FROM token_counts")) == ["k2", "k3", "k4"]


def test_a_failed_record_in_the_replys_final_transaction_undoes_only_itself(app, server, client,
                                                                            claude, script):
    """The record is written in the transaction that stores the reply (one write per turn); when
    it fails there, the reply's own writes still commit and the earlier record is kept whole."""
    from src.utils.storage import messages, prompt_records
    from src.utils.storage.db import transaction

    _, done = _chat(server, client, claude)
    conn = provider.get_db(app).conn()
    reply_id = done["message_id"]
    before = prompt_records.load(conn, reply_id)
    assert before is not None
    with transaction(conn):
        conn.execute("UPDATE messages SET content = 'rewritten' WHERE id = ?", (reply_id,))
        with pytest.raises(sqlite3.IntegrityError):  # no model (NOT NULL): after the old row went
            prompt_records.save(conn, reply_id, "anthropic", None, [], b"{}", None, None)
    assert messages.get_message(conn, reply_id).content == "rewritten"
    assert prompt_records.load(conn, reply_id) == before
