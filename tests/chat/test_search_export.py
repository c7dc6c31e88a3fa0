"""Conversation search (FTS5, kept in step with messages by triggers) and export as Markdown or
JSON: what is found, what is not (other personas, edited or deleted words), hostile queries, and
the exported files."""
import json

import pytest

from src.utils import provider
from src.utils.storage import db as db_module
from src.utils.storage.messages import add_message, delete_message, update_message


def _add(app, session_id: str, role: str, content: str) -> dict:
    return add_message(provider.get_db(app).conn(), session_id, role, content)


def _search(client, q, persona_id="default"):
    return client.get("/api/search", query_string={"persona_id": persona_id, "q": q})


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.get_json()
    return [r["message_id"] for r in response.get_json()["results"]]


def test_search_finds_words_by_prefix_ignoring_case_and_accents(client, app, make_session):
    session = make_session()
    cat = _add(app, session["id"], "user", "I adopted a cat named Pixel from the Café Über.")
    _add(app, session["id"], "assistant", "How lovely, welcome home!")
    response = _search(client, "pix cafe uber")
    assert _ids(response) == [cat["id"]]
    result = response.get_json()["results"][0]
    assert result["session_id"] == session["id"] and result["role"] == "user"
    snippet = result["snippet"]
    assert "\x02" not in snippet and [snippet[a:b] for a, b in result["highlights"]] == [
        "Pixel", "Café", "Über"]


def test_search_stays_within_the_persona(client, app, make_session, make_persona):
    other = make_persona("Theo")
    mine, theirs = make_session(), make_session(other["id"])
    found = _add(app, mine["id"], "user", "The secret word is marmalade.")
    _add(app, theirs["id"], "user", "Theo also likes marmalade.")
    assert _ids(_search(client, "marmalade")) == [found["id"]]
    assert len(_ids(_search(client, "marmalade", other["id"]))) == 1


def test_index_follows_edits_and_deletes(client, app, make_session):
    conn = provider.get_db(app).conn()
    session = make_session()
    message = _add(app, session["id"], "user", "We talked about tangerines.")
    update_message(conn, message["id"], content="We talked about pomegranates.")
    assert _ids(_search(client, "tangerines")) == []
    assert _ids(_search(client, "pomegranates")) == [message["id"]]
    delete_message(conn, message["id"])
    assert _ids(_search(client, "pomegranates")) == []

    again = _add(app, session["id"], "user", "Kumquats in the old session.")
    assert _ids(_search(client, "kumquats")) == [again["id"]]
    assert client.delete(f"/api/sessions/{session['id']}").status_code == 200
    assert _ids(_search(client, "kumquats")) == []
    integrity = conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    assert integrity is not None


def test_migration_indexes_messages_stored_before_it(client, app, make_session):
    conn = provider.get_db(app).conn()
    session = make_session()
    old = _add(app, session["id"], "user", "An old message about lighthouses.")
    for statement in ("DROP TRIGGER messages_fts_insert", "DROP TRIGGER messages_fts_delete",
                      "DROP TRIGGER messages_fts_update", "DROP TABLE messages_fts",
                      "DELETE FROM schema_migrations WHERE name = '0017_message_search'"):
        conn.execute(statement)
    conn.commit()
    assert db_module.migrate(conn) == ["0017_message_search"]
    assert _ids(_search(client, "lighthouse")) == [old["id"]]


@pytest.mark.parametrize("q", ['"', 'cat"', "NEAR(cat pixel)", "cat OR", "*", "col:cat", "^cat",
                               "cat AND NOT", "\x00\x1f", "((((", "-cat", "\u00e9\u0301"])
def test_hostile_queries_never_fail(client, app, make_session, q):
    session = make_session()
    _add(app, session["id"], "user", "cat pixel near")
    response = _search(client, q)
    assert response.status_code == 200, response.get_json()
    assert isinstance(response.get_json()["results"], list)


@pytest.mark.parametrize("params, status, code", [
    ({"persona_id": "default"}, 400, "validation_error"),
    ({"persona_id": "default", "q": "   "}, 400, "validation_error"),
    ({"persona_id": "default", "q": "x" * 201}, 400, "validation_error"),
    ({"q": "cat"}, 400, "validation_error"),
    ({"persona_id": "nobody", "q": "cat"}, 404, "persona_not_found"),
    ({"persona_id": "../etc", "q": "cat"}, 404, "persona_not_found"),
])
def test_bad_search_requests_are_clear_4xx(client, params, status, code):
    response = client.get("/api/search", query_string=params)
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code


@pytest.mark.parametrize("raw", ["%ED%A0%80", "%FF%FE", "%00", "cat%00pixel", "%E2%80%AE"])
def test_undecodable_query_bytes_are_never_a_500(client, app, make_session, raw):
    session = make_session()
    _add(app, session["id"], "user", "cat pixel")
    response = client.get(f"/api/search?persona_id=default&q={raw}")
    assert response.status_code in (200, 400), response.get_data(as_text=True)
    assert response.is_json


def test_a_huge_query_is_refused_cheaply(client):
    response = client.get("/api/search", query_string={"persona_id": "default", "q": "a" * 1_000_000})
    assert response.status_code == 400


def test_export_markdown_and_json(client, app, make_session):
    session = make_session()
    client.patch(f"/api/sessions/{session['id']}", json={"title": "Pixel comes home"})
    _add(app, session["id"], "user", "I adopted a cat.")
    _add(app, session["id"], "assistant", "**Wonderful!**\n\n```\ncode\n```")
    md = client.get(f"/api/sessions/{session['id']}/export?format=md")
    assert md.status_code == 200 and md.mimetype == "text/markdown"
    assert md.headers["Content-Disposition"] == (
        f'attachment; filename="conversation-{session["id"]}.md"')
    text = md.get_data(as_text=True)
    assert text.startswith("# Pixel comes home\n")
    assert "## You\n" in text and "I adopted a cat." in text and "**Wonderful!**" in text
    assert text.index("I adopted a cat.") < text.index("Wonderful")

    data = client.get(f"/api/sessions/{session['id']}/export?format=json")
    assert data.mimetype == "application/json"
    body = json.loads(data.get_data(as_text=True))
    assert body["session"]["title"] == "Pixel comes home"
    assert [m["content"] for m in body["messages"]] == ["I adopted a cat.",
                                                        "**Wonderful!**\n\n```\ncode\n```"]


def test_the_json_export_keeps_its_message_keys_in_their_order(client, app, make_session):
    """An export file does not change for a refactor: each message's keys in the order the
    files always had, a reply's prompt sources last, no `siblings` (alternatives hold them)."""
    sid = make_session()["id"]
    asked = _add(app, sid, "user", "Hi")
    _add(app, sid, "assistant", "Hello")
    add_message(provider.get_db(app).conn(), sid, "assistant", "Hey", parent_id=asked["id"])
    body = json.loads(client.get(f"/api/sessions/{sid}/export?format=json").get_data())
    common = ["id", "session_id", "persona_id", "role", "content", "created_at", "parent_id",
              "stop_reason", "status", "edited", "error"]
    reply = [*common, "cortex_revisions", "world_info"]
    assert [list(m) for m in body["messages"]] == [common, reply]
    assert [list(m) for m in body["alternatives"]] == [reply]


@pytest.mark.parametrize("path, status", [
    ("/api/sessions/0000000000000000/export?format=md", 404),
    ("/api/sessions/..%2F..%2Fapp.db/export", 404),
])
def test_export_of_unknown_sessions_is_404(client, path, status):
    assert client.get(path).status_code == status


def test_export_refuses_unknown_formats(client, make_session):
    session = make_session()
    response = client.get(f"/api/sessions/{session['id']}/export?format=pdf")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "format"


def test_search_finds_only_the_active_branch(client, app, make_session):
    session = make_session()
    old = _add(app, session["id"], "user", "My favourite fruit is the quince.")
    edited = client.patch(f"/api/messages/{old['id']}", json={"content": "My favourite is the fig."})
    assert edited.status_code == 200, edited.get_json()
    new_id = edited.get_json()["message"]["id"]
    assert _ids(_search(client, "quince")) == []
    assert _ids(_search(client, "fig")) == [new_id]
    switched = client.put(f"/api/sessions/{session['id']}/active", json={"message_id": old["id"]})
    assert switched.status_code == 200, switched.get_json()
    assert _ids(_search(client, "quince")) == [old["id"]]
    assert _ids(_search(client, "fig")) == []
