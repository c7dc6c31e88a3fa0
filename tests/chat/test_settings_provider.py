"""The provider settings contract (issue 13): provider, base URL, window, per-provider keys,
test-connection and the environment defaults, against the OpenAI-compatible fake over HTTP."""
import json
import os
import stat

import pytest

from src.app import create_app
from src.utils import provider as wiring
from tests.fakes.openai_compat import FakeOpenAI, replies

OPENAI_KEY = "sk-or-v1-test-0123456789abcdefOPENAIKEY"
ANTHROPIC_KEY = "sk-ant-api03-env-key-0123456789abcdefANTH"


def use_openai(client, fake, **extra) -> dict:
    response = client.put("/api/settings", json={"provider": "openai_compatible",
                                                 "base_url": fake.url + "/", "model": "qwen2.5:7b",
                                                 **extra})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_a_local_endpoint_is_ready_without_a_key(client, openai_fake):
    before = client.get("/api/settings").get_json()
    settings = use_openai(client, openai_fake, context_window=4096)
    assert before["is_ready"] is False and settings["is_ready"] is True
    assert (settings["provider"], settings["base_url"], settings["context_window"]) == (
        "openai_compatible", openai_fake.url, 4096)
    assert settings["api_key"] == {"configured": False, "last4": None, "source": None}


def test_switching_provider_keeps_each_providers_model_and_url(client, openai_fake):
    client.put("/api/settings", json={"model": "claude-opus-5-5"})
    use_openai(client, openai_fake)
    back = client.put("/api/settings", json={"provider": "anthropic"}).get_json()
    assert (back["model"], back["base_url"]) == ("claude-opus-5-5", None)
    again = client.put("/api/settings", json={"provider": "openai_compatible"}).get_json()
    assert (again["model"], again["base_url"]) == ("qwen2.5:7b", openai_fake.url)


def test_a_bad_provider_field_changes_nothing(client, openai_fake):
    response = client.put("/api/settings", json={"provider": "openai_compatible",
                                                 "base_url": "http://u:p@host/v1"})
    assert response.status_code == 400
    assert client.get("/api/settings").get_json()["provider"] == "anthropic"


def test_the_openai_key_is_checked_stored_beside_the_other_and_never_echoed(
        client, data_dir, key_hygiene):
    with FakeOpenAI(api_key=OPENAI_KEY) as fake:
        use_openai(client, fake)
        wrong = client.put("/api/settings/api-key", json={"api_key": OPENAI_KEY[:-1] + "Z"})
        stored = client.put("/api/settings/api-key", json={"api_key": OPENAI_KEY,
                                                           "provider": "openai_compatible"})
        assert wrong.status_code == 400 and wrong.get_json()["error"]["code"] == "invalid_api_key"
        assert stored.status_code == 200 and stored.get_json()["api_key"]["last4"] == "IKEY"
        assert fake.last.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    path = data_dir / "secrets.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == {"openai_api_key": OPENAI_KEY,
                                            "openai_base_url": fake.url}
    assert OPENAI_KEY not in client.get("/api/settings").get_data(as_text=True)
    removed = client.delete("/api/settings/api-key?provider=openai_compatible")
    assert removed.get_json()["api_key"]["configured"] is False and not path.exists()


def test_a_key_for_an_endpoint_without_base_url_is_refused(client):
    response = client.put("/api/settings/api-key", json={"api_key": OPENAI_KEY,
                                                         "provider": "openai_compatible"})
    assert response.status_code == 400


def test_test_connection_reports_models_tools_and_window(client, openai_fake):
    openai_fake.default = replies.tool_use([("ping", {"word": "pong"})])
    report = client.post("/api/settings/test-connection",
                         json={"provider": "openai_compatible", "base_url": openai_fake.url,
                               "model": "qwen2.5:7b"}).get_json()
    assert report["reachable"] is True and "qwen2.5:7b" in report["models"]
    assert report["tools"] == {"non_streaming": True, "streaming": True}
    assert report["context_window"] == 8192 and "error" not in report
    assert client.get("/api/settings").get_json()["provider"] == "anthropic"  # nothing stored


def test_test_connection_says_when_tools_are_refused(client, openai_fake):
    openai_fake.quirks = {"tools_refused"}
    use_openai(client, openai_fake)
    report = client.post("/api/settings/test-connection", json={}).get_json()
    assert report["reachable"] is True
    assert report["tools"] == {"non_streaming": False, "streaming": False}
    assert report["error"]["code"] == "invalid_request"  # our words, not the endpoint's
    assert report["model"] == "qwen2.5:7b"


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]x/v1", "http://\u017f.example"])
def test_test_connection_to_a_malformed_url_is_a_400_not_a_5xx(client, url):
    response = client.post("/api/settings/test-connection",
                           json={"provider": "openai_compatible", "base_url": url})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["field"] == "base_url"


def test_test_connection_to_nothing_is_unreachable_not_a_5xx(client):
    response = client.post("/api/settings/test-connection",
                           json={"provider": "openai_compatible",
                                 "base_url": "http://127.0.0.1:9/v1"})
    assert response.status_code == 200
    report = response.get_json()
    assert report["reachable"] is False and report["error"]["code"] == "connection_error"


@pytest.fixture
def env_app(app_config, key_hygiene, openai_fake):
    key_hygiene.add_secret(OPENAI_KEY)
    app = create_app({**app_config, "PROVIDER": "openai_compatible",
                      "OPENAI_BASE_URL": openai_fake.url, "OPENAI_API_KEY": OPENAI_KEY,
                      "MODEL": "llama3.2:3b"})
    yield app
    wiring.shutdown_services(app)


def test_the_environment_sets_the_defaults(env_app):
    settings = env_app.test_client().get("/api/settings").get_json()
    assert (settings["provider"], settings["base_url"], settings["model"]) == (
        "openai_compatible", env_app.config["OPENAI_BASE_URL"], "llama3.2:3b")
    assert settings["api_key"] == {"configured": True, "last4": "IKEY", "source": "environment"}
    assert settings["is_ready"] is True


def test_a_persona_model_overrides_the_setting_for_chat(client, openai_fake):
    use_openai(client, openai_fake)
    openai_fake.default = replies.text("Hi from qwen.")
    persona = client.post("/api/personas", json={"name": "Qwenna", "model": "gpt-4o-mini"})
    assert persona.status_code == 201 and persona.get_json()["model"] == "gpt-4o-mini"
    assert client.get("/api/personas/default").get_json()["model"] is None
    session = client.post("/api/sessions", json={"persona_id": persona.get_json()["id"]})
    body = client.post("/api/chat/stream", json={"session_id": session.get_json()["id"],
                                                 "message": "Hello"}).get_data(as_text=True)
    assert "Hi from qwen." in body
    assert [r.body["model"] for r in openai_fake.requests if r.stream] == ["gpt-4o-mini"]
    cleared = client.put(f"/api/personas/{persona.get_json()['id']}", json={"model": None})
    assert cleared.get_json()["model"] is None
    assert client.put("/api/personas/default", json={"model": "bad model"}).status_code == 400
