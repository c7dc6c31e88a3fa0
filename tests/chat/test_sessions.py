"""Sessions and messages: REST round trips, pagination, titles, and the message store."""
import re

import pytest

from src.utils import provider
from src.utils.storage import messages as store

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_create_returns_session_object_and_stores_it(client, rows):
    response = client.post("/api/sessions", json={"persona_id": "default"})
    assert response.status_code == 201
    session = response.get_json()
    assert re.fullmatch(r"[a-z0-9]{16}", session["id"])
    assert session["persona_id"] == "default"
    assert session["title"] == "" and session["message_count"] == 0
    assert TIMESTAMP.match(session["created_at"]) and TIMESTAMP.match(session["updated_at"])
    stored = rows("SELECT id, persona_id, title FROM sessions")
    assert stored == [{"id": session["id"], "persona_id": "default", "title": ""}]


@pytest.mark.parametrize("body,status,code", [
    ({}, 400, "validation_error"),
    ({"persona_id": 5}, 400, "validation_error"),
    ({"persona_id": "abcdefgh12"}, 404, "persona_not_found"),
    ({"persona_id": "../../etc"}, 404, "persona_not_found"),
    ({"persona_id": "default", "title": "x"}, 400, "unknown_field"),
])
def test_create_rejects_bad_input(client, rows, body, status, code):
    response = client.post("/api/sessions", json=body)
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code
    assert rows("SELECT * FROM sessions") == []


def test_list_requires_persona_id(client):
    response = client.get("/api/sessions")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "persona_id"


@pytest.mark.parametrize("pid", ["abcdefgh12", "NOT-AN-ID"])
def test_list_unknown_persona_is_404(client, pid):
    response = client.get(f"/api/sessions?persona_id={pid}")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "persona_not_found"


def test_list_is_newest_activity_first_with_titles_and_counts(
        client, make_session, make_persona, add_messages, app):
    first, second = make_session(), make_session()
    other = make_session(make_persona()["id"])
    provider.get_session_service(app).set_title(first["id"], "About tea")
    add_messages(first["id"], 2)
    listed = client.get("/api/sessions?persona_id=default").get_json()["sessions"]
    assert [s["id"] for s in listed] == [first["id"], second["id"]]
    assert listed[0]["title"] == "About tea" and listed[0]["message_count"] == 2
    assert other["id"] not in {s["id"] for s in listed}


def test_get_paginates_newest_page_first_in_chronological_order(client, make_session,
                                                                add_messages):
    sid = make_session()["id"]
    ids = [m["id"] for m in add_messages(sid, 7)]
    page = client.get(f"/api/sessions/{sid}?limit=3").get_json()
    assert [m["id"] for m in page["messages"]] == ids[4:]
    assert page["has_more"] is True and page["message_count"] == 7
    page = client.get(f"/api/sessions/{sid}?limit=3&before={ids[4]}").get_json()
    assert [m["id"] for m in page["messages"]] == ids[1:4]
    assert page["has_more"] is True
    page = client.get(f"/api/sessions/{sid}?limit=3&before={ids[1]}").get_json()
    assert [m["id"] for m in page["messages"]] == ids[:1]
    assert page["has_more"] is False
    message = page["messages"][0]
    assert set(message) == {"id", "session_id", "persona_id", "role", "content", "status",
                            "created_at", "parent_id", "siblings", "edited", "error",
                            "stop_reason"}
    assert (message["parent_id"], message["siblings"]) == (None, [message["id"]])
    assert (message["role"], message["content"], message["status"]) == ("user", "m0", "complete")


def test_get_default_page_has_fifty(client, make_session, add_messages):
    sid = make_session()["id"]
    add_messages(sid, 52)
    page = client.get(f"/api/sessions/{sid}").get_json()
    assert len(page["messages"]) == 50 and page["has_more"] is True
    assert page["messages"][-1]["content"] == "m51"


@pytest.mark.parametrize("query,field", [
    ("limit=0", "limit"), ("limit=201", "limit"), ("limit=abc", "limit"), ("limit=-1", "limit"),
    ("before=0", "before"), ("before=x", "before"),
])
def test_get_rejects_bad_paging(client, make_session, query, field):
    sid = make_session()["id"]
    response = client.get(f"/api/sessions/{sid}?{query}")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field


@pytest.mark.parametrize("sid", ["abc", "ABCDEFGHIJKLMNOP", "abcdefghijklmnopq",
                                 "aaaaaaaaaaaaaaaa"])
@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_unknown_or_malformed_session_is_404(client, sid, method):
    response = getattr(client, method)(f"/api/sessions/{sid}", json={"title": "x"})
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "session_not_found"


def test_rename_round_trip(client, make_session, rows):
    sid = make_session()["id"]
    response = client.patch(f"/api/sessions/{sid}", json={"title": "  Tea talk  "})
    assert response.status_code == 200
    assert response.get_json()["title"] == "Tea talk"
    assert rows("SELECT title FROM sessions WHERE id = ?", sid) == [{"title": "Tea talk"}]


@pytest.mark.parametrize("body,field", [
    ({}, "title"), ({"title": ""}, "title"), ({"title": "   "}, "title"),
    ({"title": "x" * 121}, "title"), ({"title": "a\nb"}, "title"), ({"title": 3}, "title"),
    ({"title": "ok", "persona_id": "default"}, "persona_id"),
])
def test_rename_rejects_bad_titles(client, make_session, rows, body, field):
    sid = make_session()["id"]
    response = client.patch(f"/api/sessions/{sid}", json=body)
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field
    assert rows("SELECT title FROM sessions") == [{"title": ""}]


def test_delete_removes_session_and_its_messages_only(client, make_session, add_messages, rows):
    doomed, kept = make_session()["id"], make_session()["id"]
    add_messages(doomed, 3)
    add_messages(kept, 2)
    response = client.delete(f"/api/sessions/{doomed}")
    assert response.status_code == 200
    assert response.get_json() == {"id": doomed, "deleted": True}
    assert rows("SELECT id FROM sessions") == [{"id": kept}]
    assert rows("SELECT DISTINCT session_id FROM messages") == [{"session_id": kept}]
    assert client.get(f"/api/sessions/{doomed}").status_code == 404


def test_generated_title_never_overwrites_a_chosen_one(app, make_session, client):
    service = provider.get_session_service(app)
    sid = make_session()["id"]
    assert service.set_title(sid, '  "Tea,\n  books and rain"  ').title == "Tea, books and rain"
    assert service.set_title(sid, "Something else") is None
    other = make_session()["id"]
    client.patch(f"/api/sessions/{other}", json={"title": "Mine"})
    assert service.set_title(other, "Generated") is None
    assert service.set_title(make_session()["id"], "x" * 300).title == "x" * 120


def test_add_message_fills_persona_and_marks_activity(app, make_persona, make_session):
    conn = provider.get_db(app).conn()
    pid = make_persona()["id"]
    session = make_session(pid)
    message = store.add_message(conn, session["id"], "user", "hello")
    assert message["persona_id"] == pid and message["status"] == "complete"
    assert TIMESTAMP.match(message["created_at"])
    updated = provider.get_session_service(app).summary(session["id"])
    assert updated.updated_at == message["created_at"] >= session["updated_at"]
    with pytest.raises(LookupError):
        store.add_message(conn, "nosuchsession000", "user", "x")


def test_update_delete_and_count_messages(app, make_session, add_messages):
    conn = provider.get_db(app).conn()
    sid, other = make_session()["id"], make_session()["id"]
    first, second, third = add_messages(sid, 3)
    add_messages(other, 2)
    changed = store.update_message(conn, third["id"], content="partial", status="incomplete")
    assert (changed.content, changed.status) == ("partial", "incomplete")
    assert store.update_message(conn, 10**9, content="x") is None
    assert store.delete_message(conn, second["id"]) is True
    assert store.delete_message(conn, second["id"]) is False
    assert store.get_message(conn, third["id"]) is None, "a message's answers go with it"
    assert [m.id for m in store.last_messages(conn, sid, 5)] == [first["id"]]
    assert store.count_messages(conn, sid) == 1
    assert store.count_messages(conn, persona_id="default") == 3
    assert store.count_messages(conn, persona_id="default", after_id=third["id"]) == 2
    assert store.count_messages(conn, sid, before_id=third["id"]) == 1


def test_history_for_prompt_is_valid_messages_api_input(app, make_session):
    conn = provider.get_db(app).conn()
    sid = make_session()["id"]
    for role, content in [("assistant", "greeting"), ("user", "a"), ("assistant", ""),
                          ("user", "b"), ("assistant", "c"), ("user", "d")]:
        store.add_message(conn, sid, role, content, "incomplete" if not content else "complete")
    assert [m.turn() for m in store.history_for_prompt(conn, sid, 10)] == [
        {"role": "user", "content": "a\n\nb"},
        {"role": "assistant", "content": "c"},
        {"role": "user", "content": "d"},
    ]
    assert [m.turn() for m in store.history_for_prompt(conn, sid, 2)] == [
        {"role": "user", "content": "d"}]


def test_a_page_marks_a_streaming_reply_followed_once_and_leaves_a_stop_mark(
        app, client, make_session, rows):
    """Reading a page asks the generating process for the reply's text (`followed`); a reply
    already marked (followed, or asked to stop) costs no write, and its mark stays."""
    conn = provider.get_db(app).conn()
    sid = make_session()["id"]
    user = store.add_message(conn, sid, "user", "Go")
    reply = store.add_message(conn, sid, "assistant", "", "incomplete", parent_id=user["id"],
                              streaming=True)
    mark = "SELECT stop_reason FROM messages WHERE id = ?"
    written: list[str] = []
    leases = provider.services_of(app).session_leases
    assert leases.claim(sid)  # held as the generating process holds it: the reply is live
    conn.set_trace_callback(written.append)
    try:
        assert client.get(f"/api/sessions/{sid}").get_json()["messages"][-1]["status"] == \
            "streaming"
        assert rows(mark, reply["id"]) == [{"stop_reason": "followed"}]
        assert store.request_stop(conn, reply["id"])
        written.clear()
        shown = client.get(f"/api/sessions/{sid}").get_json()["messages"][-1]
        assert (shown["status"], shown["stop_reason"]) == ("streaming", None)
        assert rows(mark, reply["id"]) == [{"stop_reason": "stop_requested"}]
        assert not [sql for sql in written if sql.startswith(("BEGIN", "UPDATE"))], written
    finally:
        conn.set_trace_callback(None)
        leases.release(sid)
