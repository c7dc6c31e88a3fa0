"""Hostile and huge chat files (DESIGN §16): each gets a clear 4xx with a stable reason and leaves
nothing behind (every table row compared before and after). Limits: docs/chat-import.md."""
import json

import pytest

from src.utils.limits import CHAT_IMPORT
from tests.portability.support import upload

HEADER = {"user_name": "Robin", "character_name": "Seraphina", "create_date": "2024-06-06@15h14m02s",
          "chat_metadata": {}}


def _message(**fields) -> dict:
    return {"name": "Seraphina", "is_user": False, "is_system": False,
            "send_date": "June 6, 2024 3:14pm", "mes": "Hello.", "extra": {}, **fields}


def _jsonl(*messages, header=HEADER) -> bytes:
    """A chat whose good first message comes before the bad one (nothing may be half-stored)."""
    lines = [json.dumps(header), json.dumps(_message()), *(
        m if isinstance(m, str) else json.dumps(m) for m in messages)]
    return "\n".join(lines).encode("utf-8")


HOSTILE = {
    "empty": (b"", 400, "empty_chat"),
    "blank lines": (b"\n\n  \n", 400, "empty_chat"),
    "header only": (json.dumps(HEADER).encode(), 400, "empty_chat"),
    "not utf-8": (b'{"mes": "\xff\xfe"}', 400, "invalid_utf8"),
    "invalid json line": (_jsonl('{"name": "x", "mes": '), 400, "invalid_json"),
    "NaN": (_jsonl('{"mes": "a", "swipe_id": NaN}'), 400, "invalid_json"),
    "a line that is a list": (_jsonl([1, 2]), 400, "not_a_message"),
    "mes a number": (_jsonl(_message(mes=42)), 400, "wrong_type"),
    "mes missing": (_jsonl({"name": "x", "is_user": True}), 400, "wrong_type"),
    "is_user a string": (_jsonl(_message(is_user="yes")), 400, "wrong_type"),
    "swipes an object": (_jsonl(_message(swipes={"0": "a"})), 400, "wrong_type"),
    "swipe not a string": (_jsonl(_message(swipes=["a", 7], swipe_id=0)), 400, "wrong_type"),
    "swipe_id a string": (_jsonl(_message(swipes=["a", "b"], swipe_id="1")), 400, "wrong_type"),
    "name a list": (_jsonl(_message(name=["x"])), 400, "wrong_type"),
    "header name a dict": (_jsonl(header={**HEADER, "user_name": {}}), 400, "wrong_type"),
    "lone surrogate": (_jsonl('{"mes": "bad \\ud800 text"}'), 400, "invalid_text"),
    "control characters": (_jsonl(_message(mes="bell\u0007")), 400, "control_characters"),
    "deep nesting": (_jsonl('{"mes": "a", "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"),
                     400, "too_deep"),
    "10 MB field": (_jsonl(_message(mes="x" * 10_000_000)), 413, "line_too_long"),
    "long message": (_jsonl(_message(mes="x" * (CHAT_IMPORT["message_chars"] + 1))), 413,
                     "message_too_long"),
    "long name": (_jsonl(_message(name="n" * (CHAT_IMPORT["name_chars"] + 1))), 413,
                  "name_too_long"),
    "too many swipes": (_jsonl(_message(swipes=["s"] * (CHAT_IMPORT["swipes"] + 1), swipe_id=0)),
                        413, "too_many_swipes"),
    "too many lines": (b"\n" * (CHAT_IMPORT["lines"] + 1), 413, "too_many_lines"),
    "too many messages": (_jsonl(*[_message(swipes=["s"] * CHAT_IMPORT["swipes"], swipe_id=0)]
                                 * (CHAT_IMPORT["messages"] // CHAT_IMPORT["swipes"])), 413,
                          "too_many_messages"),
    "export without messages": (b'{\n"session": {}, "messages": 3}', 400, "not_a_chat"),
    "export with a bad parent": (json.dumps({"session": {}, "messages": [
        {"id": 1, "role": "user", "content": "a", "created_at": "2024-01-01T00:00:00Z"},
        {"id": 2, "parent_id": 9, "role": "assistant", "content": "b",
         "created_at": "2024-01-01T00:00:00Z"}]}, indent=2).encode(), 400, "unknown_parent"),
    "export with a bad role": (json.dumps({"session": {}, "messages": [
        {"id": 1, "role": "system", "content": "a"}]}, indent=2).encode(), 400, "wrong_type"),
}


@pytest.fixture
def persona(client) -> str:
    return client.post("/api/personas", json={"name": "Seraphina"}).get_json()["id"]


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("preview", [False, True])
def test_a_hostile_chat_is_refused_with_a_reason_and_nothing_written(client, snapshot, persona,
                                                                    name, preview):
    data, status, reason = HOSTILE[name]
    before = snapshot()
    url = f"/api/personas/{persona}/chats/import" + ("?preview=1" if preview else "")
    response = upload(client, data, url, filename="chat.jsonl")
    assert response.status_code == status, response.get_json()
    error = response.get_json()["error"]
    assert error["code"] == ("too_large" if status == 413 else "invalid_chat")
    assert error["reason"] == reason and error["message"]
    assert snapshot() == before


def test_a_file_over_the_upload_limit_is_refused(client, snapshot, persona):
    before = snapshot()
    response = upload(client, b"{" + b" " * (16 * 1024 * 1024),
                      f"/api/personas/{persona}/chats/import")
    assert response.status_code == 413
    assert snapshot() == before


def test_a_chat_is_sent_as_a_file(client, persona):
    response = client.post(f"/api/personas/{persona}/chats/import", json={"file": "x"})
    assert response.status_code == 415
    assert response.get_json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize("date", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_date_at_the_ends_of_the_calendar_is_undated_not_a_server_error(client, persona,
                                                                           date):
    data = _jsonl(_message(send_date=date))
    response = upload(client, data, f"/api/personas/{persona}/chats/import",
                      filename="chat.jsonl")
    assert response.status_code == 201, response.get_json()
    summary = response.get_json()["summary"]
    assert summary["undated"] == 1 and summary["last_date"] == "2024-06-06T15:14:00.000Z"


@pytest.mark.parametrize("name", ["Sera\nphina", "Sera\r\nphina", "Sera\u2028phina"])
def test_a_title_is_one_line_like_every_session_title(client, persona, name):
    chats = {"sillytavern": _jsonl(header={**HEADER, "character_name": name}),
             "export": json.dumps({"session": {"title": f"Chat with {name}"}, "messages": [
                 {"id": 1, "role": "user", "content": "a"}]}, indent=2).encode()}
    for data in chats.values():
        response = upload(client, data, f"/api/personas/{persona}/chats/import",
                          filename="chat.jsonl")
        assert response.status_code == 201, response.get_json()
        title = response.get_json()["title"]
        assert "Sera phina" in title and title == " ".join(title.split())
