"""Alternate greetings (DESIGN §12, V2 spec: frontends must offer them): a session picks which
greeting opens it, before its first message, and the prompt holds the one the person saw."""
import pytest

from tests.chat.chat_support import ChatSocketClient, chat_requests, live_config
from tests.portability.support import ST_CHAT, upload


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@pytest.fixture
def persona(client) -> dict:
    response = client.post("/api/personas", json={
        "name": "Aria", "greeting": "Hello, {{user}}.",
        "alternate_greetings": ["Storm's coming, {{user}}.", "Ahoy!"]})
    assert response.status_code == 201
    return response.get_json()


def test_a_session_opens_with_the_chosen_greeting(server, client, claude, script, persona):
    session = client.post("/api/sessions", json={"persona_id": persona["id"],
                                                 "greeting_index": 1}).get_json()
    assert session["greeting_index"] == 1
    response = client.patch(f"/api/sessions/{session['id']}", json={"greeting_index": 2})
    assert response.status_code == 200 and response.get_json()["greeting_index"] == 2
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(session["id"], "Hi")
    text = chat_requests(claude)[-1].system[0]["text"]
    assert "<greeting>\nAhoy!\n</greeting>" in text and "Hello," not in text
    late = client.patch(f"/api/sessions/{session['id']}", json={"greeting_index": 0})
    assert late.status_code == 409
    assert late.get_json()["error"]["code"] == "conversation_started"
    assert client.get(f"/api/sessions/{session['id']}").get_json()["greeting_index"] == 2


def test_the_default_is_the_main_greeting(server, client, claude, script, persona):
    session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    assert session["greeting_index"] == 0
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(session["id"], "Hi")
    assert "Hello, " in chat_requests(claude)[-1].system[0]["text"]


@pytest.mark.parametrize("value", [3, -1, "1", True, None, 1.0])
def test_a_greeting_index_must_name_a_greeting(client, persona, value):
    response = client.post("/api/sessions", json={"persona_id": persona["id"],
                                                  "greeting_index": value})
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "greeting_index"
    assert client.get(f"/api/sessions?persona_id={persona['id']}").get_json()["sessions"] == []


def test_an_imported_conversation_opens_with_its_own_first_message(server, client, claude, script,
                                                                   persona):
    imported = upload(client, ST_CHAT, f"/api/personas/{persona['id']}/chats/import")
    session = imported.get_json()
    assert imported.status_code == 201 and session["imported"] is True
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(session["id"], "Hi")
    request = chat_requests(claude)[-1]
    assert "<greeting>" not in request.system[0]["text"] and "Hello," not in request.system[0]["text"]
    first = request.messages[0]["content"]
    assert "Where am I?" in (first if isinstance(first, str) else first[0]["text"])
    plain = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    assert plain["imported"] is False
