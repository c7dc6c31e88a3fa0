"""The end of a conversation: regenerate (SSE and WebSocket), edit last, delete last."""
import json
import threading
import urllib.request

import pytest

from tests.chat.chat_support import ChatSocketClient, SseStream, chat_requests, live_config
from tests.fakes.claude import replies


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _call(server, method: str, path: str, body=None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def _conversation(server, script, session_id, *turns):
    """Runs the turns (message, reply) over the WebSocket."""
    with ChatSocketClient(server.ws_url) as ws:
        for message, reply in turns:
            script.reply(reply)
            assert ws.chat(session_id, message)[-1]["type"] == "done"


def _stored(rows, session_id):
    return [(r["role"], r["content"], r["status"]) for r in rows(
        "SELECT role, content, status FROM messages WHERE session_id = ? ORDER BY id", session_id)]


def _branch(server, session_id):
    """The active branch as (role, content, status) and each message's sibling count."""
    status, body = _call(server, "GET", f"/api/sessions/{session_id}")
    assert status == 200
    return [(m["role"], m["content"], m["status"], len(m["siblings"]))
            for m in body["messages"]]


def test_regenerate_keeps_the_last_reply_as_an_alternative(server, claude, script,
                                                          make_session, rows):
    session = make_session()
    _conversation(server, script, session["id"], ("one", "Reply one."), ("two", "Reply two."))
    script.reply("Better reply two.")
    with SseStream(server.url, f"/api/sessions/{session['id']}/regenerate", {}) as stream:
        events = stream.events()
    assert next(kind for kind, _ in events) == "start"
    assert events[-1][0] == "done" and events[-1][1]["text"] == "Better reply two."
    assert chat_requests(claude)[-1].messages == [
        {"role": "user", "content": "one"}, {"role": "assistant", "content": "Reply one."},
        {"role": "user", "content": "two"}]
    assert _stored(rows, session["id"]) == [
        ("user", "one", "complete"), ("assistant", "Reply one.", "complete"),
        ("user", "two", "complete"), ("assistant", "Reply two.", "complete"),
        ("assistant", "Better reply two.", "complete")]
    assert _branch(server, session["id"]) == [
        ("user", "one", "complete", 1), ("assistant", "Reply one.", "complete", 1),
        ("user", "two", "complete", 1), ("assistant", "Better reply two.", "complete", 2)]


def test_regenerate_over_the_socket_keeps_a_stopped_reply_as_alternative(
        server, claude, script, make_session, rows):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("Half an answer", chunks=["Half", " an answer"]),
                               gate))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=session["id"], message="Question")
        assert ws.until("chunk")[-1]["text"] == "Half"
        ws.send(type="stop")
        assert ws.until("done")[-1]["stop_reason"] == "cancelled"
        gate.set()
        script.reply("A whole answer.")
        ws.send(type="regenerate", session_id=session["id"])
        assert ws.until("done")[-1]["text"] == "A whole answer."
    assert _stored(rows, session["id"]) == [
        ("user", "Question", "complete"), ("assistant", "Half", "incomplete"),
        ("assistant", "A whole answer.", "complete")]
    assert _branch(server, session["id"])[-1] == ("assistant", "A whole answer.", "complete", 2)


def test_regenerate_refusals(server, make_session):
    session = make_session()
    status, body = _call(server, "POST", f"/api/sessions/{session['id']}/regenerate", {})
    assert (status, body["error"]["code"]) == (409, "nothing_to_regenerate")
    status, body = _call(server, "POST", "/api/sessions/nosuchsession000/regenerate", {})
    assert (status, body["error"]["code"]) == (404, "session_not_found")
    request = urllib.request.Request(
        f"{server.url}/api/sessions/{session['id']}/regenerate", data=b"a=1", method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    with refused.value as error:
        assert error.code == 415


def test_edit_last_replaces_the_message_and_drops_its_reply(server, claude, script,
                                                            make_session, rows):
    session = make_session()
    _conversation(server, script, session["id"], ("one", "Reply one."), ("tow", "Reply tow."))
    old_id = rows("SELECT max(id) AS id FROM messages WHERE role = 'user'")[0]["id"]
    status, body = _call(server, "PUT", f"/api/sessions/{session['id']}/messages/last",
                         {"content": "two"})
    assert status == 200
    assert body["message"]["content"] == "two" and body["message"]["id"] > old_id
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("user", "one"), ("assistant", "Reply one."), ("user", "two")]
    script.reply("Reply two.")
    with SseStream(server.url, f"/api/sessions/{session['id']}/regenerate", {}) as stream:
        assert stream.events()[-1][1]["text"] == "Reply two."
    assert chat_requests(claude)[-1].messages[-1] == {"role": "user", "content": "two"}
    assert _stored(rows, session["id"])[-2:] == [
        ("user", "two", "complete"), ("assistant", "Reply two.", "complete")]


@pytest.mark.parametrize("body,status,code", [
    ({"content": ""}, 400, "validation_error"),
    ({"content": "x" * 32_001}, 400, "validation_error"),
    ({"text": "hi"}, 400, "unknown_field"),
])
def test_edit_last_rejects_bad_input_and_writes_nothing(server, script, make_session, rows,
                                                         body, status, code):
    session = make_session()
    _conversation(server, script, session["id"], ("one", "Reply one."))
    before = _stored(rows, session["id"])
    got_status, got = _call(server, "PUT", f"/api/sessions/{session['id']}/messages/last", body)
    assert (got_status, got["error"]["code"]) == (status, code)
    assert _stored(rows, session["id"]) == before


def test_edit_last_on_an_empty_session_is_409(server, make_session):
    session = make_session()
    status, body = _call(server, "PUT", f"/api/sessions/{session['id']}/messages/last",
                         {"content": "hi"})
    assert (status, body["error"]["code"]) == (409, "nothing_to_edit")


def test_delete_last_removes_the_last_exchange(server, script, make_session, rows):
    session = make_session()
    _conversation(server, script, session["id"], ("one", "Reply one."), ("two", "Reply two."))
    status, body = _call(server, "DELETE", f"/api/sessions/{session['id']}/messages/last")
    assert status == 200 and len(body["deleted_ids"]) == 2
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("user", "one"), ("assistant", "Reply one.")]
    assert _stored(rows, session["id"]) == [
        ("user", "one", "complete"), ("assistant", "Reply one.", "complete")]


def test_delete_last_removes_an_unanswered_message_alone(server, script, make_session, rows):
    session = make_session()
    _conversation(server, script, session["id"], ("one", "Reply one."))
    script.reply(replies.overloaded())
    with ChatSocketClient(server.ws_url) as ws:
        assert ws.chat(session["id"], "two")[-1]["type"] == "error"
    status, body = _call(server, "DELETE", f"/api/sessions/{session['id']}/messages/last")
    assert status == 200 and len(body["deleted_ids"]) == 2, "the message and its failed reply"
    assert [r[1] for r in _stored(rows, session["id"])] == ["one", "Reply one."]
    status, body = _call(server, "DELETE", f"/api/sessions/{session['id']}/messages/last")
    status, body = _call(server, "DELETE", f"/api/sessions/{session['id']}/messages/last")
    assert (status, body["error"]["code"]) == (409, "nothing_to_delete")


def test_edits_wait_for_a_streaming_reply(server, script, make_session, rows):
    session = make_session()
    gate = threading.Event()
    script.reply(replies.gated(replies.text("Streaming..."), gate))
    with ChatSocketClient(server.ws_url) as ws:
        ws.send(type="chat", session_id=session["id"], message="hi")
        ws.until("chunk")
        for method, body in (("PUT", {"content": "edited"}), ("DELETE", None)):
            status, answer = _call(server, method,
                                   f"/api/sessions/{session['id']}/messages/last", body)
            assert (status, answer["error"]["code"]) == (409, "session_busy")
        gate.set()
        ws.until("done")
    assert [r[1] for r in _stored(rows, session["id"])] == ["hi", "Streaming..."]
