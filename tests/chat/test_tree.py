"""The conversation tree: edit any message, alternatives, switching branches, and what the
prompt and the cortex see (only the active branch)."""
import json
import urllib.request

import pytest

from tests.chat.chat_support import ChatSocketClient, chat_requests, live_config


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


def _branch(server, sid) -> list[dict]:
    status, body = _call(server, "GET", f"/api/sessions/{sid}")
    assert status == 200
    return body["messages"]


def _chat(ws, script, sid, message, reply) -> dict:
    script.reply(reply)
    final = ws.chat(sid, message)[-1]
    assert final["type"] == "done", final
    return final


def test_editing_a_user_message_branches_and_the_prompt_holds_only_the_new_branch(
        server, claude, script, make_session, rows):
    sid = make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        _chat(ws, script, sid, "I have a cat.", "Lovely, a cat!")
        _chat(ws, script, sid, "Her name is Tom.", "Tom is a fine name.")
        first_user = _branch(server, sid)[0]
        status, body = _call(server, "PATCH", f"/api/messages/{first_user['id']}",
                             {"content": "I have a dog."})
        assert status == 200 and body["message"]["parent_id"] is None
        assert [m["content"] for m in body["messages"]] == ["I have a dog."]
        assert body["messages"][0]["siblings"] == [first_user["id"], body["message"]["id"]]
        script.reply("A dog, how nice!")
        ws.send(type="regenerate", message_id=body["message"]["id"])
        assert ws.until("done", "error")[-1]["type"] == "done"
    assert chat_requests(claude)[-1].messages == [{"role": "user", "content": "I have a dog."}]
    branch = _branch(server, sid)
    assert [m["content"] for m in branch] == ["I have a dog.", "A dog, how nice!"]
    switched = _call(server, "PUT", f"/api/sessions/{sid}/active",
                     {"message_id": first_user["id"]})[1]
    assert [m["content"] for m in switched["messages"]] == [
        "I have a cat.", "Lovely, a cat!", "Her name is Tom.", "Tom is a fine name."]
    assert switched["messages"][0]["siblings"] == branch[0]["siblings"]
    with ChatSocketClient(server.ws_url) as ws:
        _chat(ws, script, sid, "She is old.", "Old cats are the best.")
    assert chat_requests(claude)[-1].messages[0] == {"role": "user", "content": "I have a cat."}
    assert "dog" not in json.dumps(chat_requests(claude)[-1].messages)
    changes = rows("SELECT change, cause, COUNT(*) AS n FROM message_changes "
                   "GROUP BY change, cause ORDER BY change, cause")
    assert changes == [{"change": "restored", "cause": "switch", "n": 4},
                       {"change": "retracted", "cause": "edit", "n": 4},
                       {"change": "retracted", "cause": "switch", "n": 2}]


def test_regenerating_an_earlier_reply_keeps_alternatives_in_order(server, claude, script,
                                                                   make_session):
    sid = make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        first = _chat(ws, script, sid, "one", "Reply one.")
        _chat(ws, script, sid, "two", "Reply two.")
        script.reply("Another reply one.")
        ws.send(type="regenerate", message_id=first["message_id"])
        done = ws.until("done", "error")[-1]
    assert done["type"] == "done"
    assert chat_requests(claude)[-1].messages == [{"role": "user", "content": "one"}]
    branch = _branch(server, sid)
    assert [m["content"] for m in branch] == ["one", "Another reply one."]
    assert branch[1]["siblings"] == [first["message_id"], done["message_id"]]
    back = _call(server, "PUT", f"/api/sessions/{sid}/active",
                 {"message_id": first["message_id"]})[1]
    assert [m["content"] for m in back["messages"]] == ["one", "Reply one.", "two", "Reply two."]


def test_editing_a_reply_adds_an_edited_sibling_that_the_next_prompt_uses(
        server, claude, script, make_session):
    sid = make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        done = _chat(ws, script, sid, "Hi", "Hello, I am Bob.")
        status, body = _call(server, "PATCH", f"/api/messages/{done['message_id']}",
                             {"content": "Hello, I am Mira."})
        assert status == 200 and body["message"]["edited"] is True
        assert body["messages"][-1]["siblings"] == [done["message_id"], body["message"]["id"]]
        _chat(ws, script, sid, "Who are you?", "Mira.")
    assert chat_requests(claude)[-1].messages[1] == {"role": "assistant",
                                                     "content": "Hello, I am Mira."}


def test_continue_appends_to_the_partial_reply(server, claude, script, make_session):
    sid = make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        script.reply("Once upon a time ")
        done = ws.chat(sid, "Tell me a story")[-1]
        script.reply(" there was a fox.")
        ws.send(type="continue", message_id=done["message_id"])
        events = ws.until("done", "error")
    assert events[0]["type"] == "start" and events[0]["reply_id"] == done["message_id"]
    assert "".join(e["text"] for e in events if e["type"] == "chunk") == " there was a fox."
    assert events[-1]["text"] == "Once upon a time there was a fox."
    assert chat_requests(claude)[-1].messages[-1] == {"role": "assistant",
                                                      "content": "Once upon a time"}
    assert [m["content"] for m in _branch(server, sid)] == [
        "Tell me a story", "Once upon a time there was a fox."]


@pytest.mark.parametrize("method,path,body,status,code", [
    ("PATCH", "/api/messages/999999", {"content": "x"}, 404, "message_not_found"),
    ("PATCH", "/api/messages/MID", {"content": ""}, 400, "validation_error"),
    ("PATCH", "/api/messages/MID", {"content": "\ud800"}, 400, "validation_error"),
    ("PATCH", "/api/messages/MID", {"content": "x" * 32_001}, 400, "validation_error"),
    ("PATCH", "/api/messages/MID", {"content": "x", "role": "user"}, 400, None),
    ("PUT", "/api/sessions/SID/active", {"message_id": "1"}, 400, "validation_error"),
    ("PUT", "/api/sessions/SID/active", {"message_id": 999999}, 404, "message_not_found"),
    ("PUT", "/api/sessions/SID/active", {"message_id": "OTHER"}, 404, "message_not_found"),
])
def test_tree_requests_are_checked(server, script, make_session, add_messages, rows,
                                   method, path, body, status, code):
    sid, other = make_session()["id"], make_session()["id"]
    mid = add_messages(sid, 2)[0]["id"]
    foreign = add_messages(other, 1)[0]["id"]
    body = {k: (foreign if v == "OTHER" else v) for k, v in body.items()}
    before = rows("SELECT * FROM messages ORDER BY id")
    got, answer = _call(server, method, path.replace("MID", str(mid)).replace("SID", sid), body)
    assert got == status and (code is None or answer["error"]["code"] == code)
    assert rows("SELECT * FROM messages ORDER BY id") == before


def test_the_cortex_counts_and_reads_only_the_active_branch(app, make_session, add_messages):
    from src.utils import provider
    sid = make_session()["id"]
    first = add_messages(sid, 4)[0]
    provider.get_chat_service(app).edit_message(first["id"], "edited")
    trigger = provider.get_cortex_trigger(app)
    assert trigger.status("default")["unprocessed"] == 1
    update = provider.get_update_service(app)
    assert update.plan_range("default") == (first["id"] + 4, first["id"] + 4)


@pytest.mark.parametrize("frame,code", [
    ({"type": "regenerate", "message_id": "1"}, "invalid_request"),
    ({"type": "regenerate", "message_id": True}, "invalid_request"),
    ({"type": "regenerate", "message_id": 2**70}, "invalid_request"),
    ({"type": "regenerate", "message_id": 999999}, "message_not_found"),
    ({"type": "continue"}, "invalid_request"),
    ({"type": "continue", "message_id": "USER"}, "nothing_to_continue"),
    ({"type": "continue", "message_id": "FIRST_REPLY"}, "not_last"),
    ({"type": "regenerate", "message_id": "FOREIGN", "session_id": "SID"}, "message_not_found"),
    ({"type": "resume", "session_id": ["x"]}, "session_not_found"),
    ({"type": "stop", "session_id": 7}, "session_not_found"),
])
def test_hostile_tree_frames_get_an_error_and_change_nothing(server, script, make_session,
                                                             rows, frame, code):
    sid, other = make_session()["id"], make_session()["id"]
    with ChatSocketClient(server.ws_url) as ws:
        first = _chat(ws, script, sid, "one", "Reply one.")
        _chat(ws, script, sid, "two", "Reply two.")
        script.reply("Foreign.")
        foreign = ws.chat(other, "x")[-1]["message_id"]
        ids = {"USER": first["message_id"] - 1, "FIRST_REPLY": first["message_id"],
               "FOREIGN": foreign, "SID": sid}
        before = rows("SELECT * FROM messages ORDER BY id")
        ws.send(**{k: ids.get(v, v) if isinstance(v, str) else v for k, v in frame.items()})
        answer = ws.until("error", "done")[-1]
        assert (answer["type"], answer["code"]) == ("error", code)
        ws.send(type="subscribe", persona_id="default")
        assert ws.until("subscribed")[-1]["type"] == "subscribed"
    assert rows("SELECT * FROM messages ORDER BY id") == before
