"""An imported character card in the prompt (DESIGN §12): placeholders resolved, example
dialogue in the cached prefix, the card's system prompt and post-history instructions honoured
unless switched off, and creator notes never sent (proved by what the fake recorded)."""
import json

import pytest

from tests.chat.chat_support import ChatSocketClient, chat_requests, live_config
from tests.portability.support import V2_CARD, V3_CARD, b64, png, upload


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _import(client, card: dict) -> dict:
    response = upload(client, json.dumps(card).encode(), filename="card.json")
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _chat(server, client, persona: dict, message: str = "Hi there") -> None:
    session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    with ChatSocketClient(server.ws_url) as ws:
        ws.chat(session["id"], message)


def test_a_v2_card_shapes_the_prompt_and_its_creator_notes_stay_out(server, client, claude,
                                                                    script):
    client.put("/api/settings", json={"user_name": "Sam"})
    persona = _import(client, V2_CARD)
    _chat(server, client, persona)
    request = chat_requests(claude)[-1]
    stable = request.system[0]
    text = stable["text"]
    assert stable["cache_control"] == {"type": "ephemeral"}
    assert text.startswith("Write vividly. You are Aria, in a conversation with Sam.")
    assert "Aria is a lighthouse keeper." in text
    assert "Aria's personality: calm, curious" in text
    assert "Scenario: A stormy night at the lighthouse." in text
    assert "<example_dialogue>\n<START>\nSam: Hi\nAria: Hello there.\n</example_dialogue>" \
        in text
    assert "<greeting>\n*Aria opens the door.* Come in, Sam, quickly!\n</greeting>" in text
    assert "{{char}}" not in text and "{{user}}" not in text
    sent = json.dumps(request.body)
    assert "PLUM-7731" not in sent and "slow burns" not in sent
    assert "The lamp is old" not in sent and "agnai" not in sent
    last = request.body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [
        {"type": "text", "text": "Hi there"},
        {"type": "text", "text": "<post_history_instructions>\nStay in the storm's mood.\n"
                                 "</post_history_instructions>"}]


def test_switching_card_prompts_off_sends_neither(server, client, claude, script):
    persona = _import(client, V2_CARD)
    response = client.put(f"/api/personas/{persona['id']}", json={"use_card_prompts": False})
    assert response.status_code == 200 and response.get_json()["use_card_prompts"] is False
    _chat(server, client, persona)
    request = chat_requests(claude)[-1]
    assert request.system[0]["text"].startswith("You are Aria, in a conversation with")
    assert "Write vividly" not in json.dumps(request.body)
    assert "storm's mood" not in json.dumps(request.body)
    assert request.body["messages"][-1]["content"] == "Hi there"


def test_a_v3_nickname_stands_for_char(server, client, claude, script):
    persona = _import(client, V3_CARD)
    _chat(server, client, persona)
    text = chat_requests(claude)[-1].system[0]["text"]
    assert "Ari is a lighthouse keeper." in text and "*Ari opens the door.*" in text
    assert "You are Aria," in text


def test_a_png_card_behaves_like_its_json(server, client, claude, script):
    response = upload(client, png({"chara": b64(V2_CARD)}))
    assert response.status_code == 201
    _chat(server, client, response.get_json())
    assert "Aria's personality: calm, curious" in chat_requests(claude)[-1].system[0]["text"]


def test_with_no_name_set_user_reads_as_a_name_not_as_the_user(server, client, claude, script):
    persona = _import(client, V2_CARD)
    _chat(server, client, persona)
    request = chat_requests(claude)[-1]
    text = request.system[0]["text"]
    assert "<greeting>\n*Aria opens the door.* Come in, User, quickly!\n</greeting>" in text
    assert "<example_dialogue>\n<START>\nUser: Hi\nAria: Hello there.\n</example_dialogue>" \
        in text
    assert "Come in, the user" not in text
    assert "You are Aria, in a conversation with the user." in text
