"""`NaN`, `Infinity` and `-Infinity` are not JSON, though Python's decoder takes them: a body or
a WebSocket frame holding one is refused (400 `invalid_json`, a frame error) and nothing is
stored, so no later answer can carry a value that is not JSON."""
import json

import pytest

from src.utils.services.chat_frames import FrameError, parse_frame

CONSTANTS = ("NaN", "Infinity", "-Infinity")


def _put(client, path: str, text: str):
    return client.put(path, data=text, content_type="application/json")


@pytest.mark.parametrize("constant", CONSTANTS)
def test_a_constant_inside_a_card_is_refused_and_the_persona_stays_valid_json(client, constant):
    persona = client.post("/api/personas", json={"name": "Ada"}).get_json()
    path = f"/api/personas/{persona['id']}"
    before = client.get(path).get_data(as_text=True)
    answer = _put(client, path, '{"name": "Ada", "extensions": {"x": ' + constant + '}}')
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert answer.get_json()["error"]["code"] == "invalid_json"
    after = client.get(path).get_data(as_text=True)
    assert after == before
    json.loads(after, parse_constant=lambda name: pytest.fail(f"{name} in an answer"))


@pytest.mark.parametrize("constant", CONSTANTS)
def test_a_constant_in_the_settings_is_refused(client, constant):
    answer = _put(client, "/api/settings", '{"max_tokens": ' + constant + '}')
    assert answer.status_code == 400
    assert answer.get_json()["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("constant", CONSTANTS)
def test_a_frame_with_a_constant_is_a_frame_error(constant):
    with pytest.raises(FrameError):
        parse_frame('{"type": "chat", "session_id": "s", "message": "hi", "x": ' + constant + '}')


def test_ordinary_numbers_still_pass():
    assert parse_frame('{"type": "chat", "x": 1.5e3}')["x"] == 1500.0
