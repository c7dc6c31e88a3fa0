"""Switching provider back and forth never leaves a base URL, key or model of the other one in
use (issue 20), over HTTP against both fakes: each provider remembers its own."""
import json

import pytest

from tests.fakes.claude import replies
from tests.fakes.openai_compat import replies as openai_replies

CLAUDE_KEY = "sk-ant-api03-switching-key-0123456789abSWCH"


@pytest.fixture
def app_config(app_config, claude):
    claude.api_key = CLAUDE_KEY
    return {**app_config, "ANTHROPIC_API_KEY": CLAUDE_KEY, "ANTHROPIC_BASE_URL": claude.url,
            "MODEL": "claude-opus-5-5"}


def chat(client) -> list[str]:
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()
    body = client.post("/api/chat/stream", json={"session_id": session["id"],
                                                 "message": "Hello"}).get_data(as_text=True)
    return [line[7:] for line in body.splitlines() if line.startswith("event: ")]


def streamed(fake) -> list:
    return [r for r in fake.requests if r.stream]


def test_back_and_forth_uses_each_providers_own_url_key_and_model(client, claude, openai_fake):
    claude.default = replies.text("Claude here.")
    openai_fake.default = openai_replies.text("Qwen here.")
    put = client.put("/api/settings", json={"provider": "openai_compatible",
                                            "base_url": openai_fake.url, "model": "qwen2.5:7b"})
    assert put.status_code == 200, put.get_json()
    assert chat(client)[-1] == "done"
    # what the settings page sent when switching back: the provider with the form's old URL
    moved = client.put("/api/settings", json={"provider": "anthropic",
                                              "base_url": openai_fake.url})
    assert moved.status_code == 409 and moved.get_json()["error"]["code"] == "key_bound_to_url"
    back = client.put("/api/settings", json={"provider": "anthropic"}).get_json()
    assert (back["provider"], back["base_url"], back["model"]) == (
        "anthropic", claude.url, "claude-opus-5-5")
    assert chat(client)[-1] == "done"
    again = client.put("/api/settings", json={"provider": "openai_compatible"}).get_json()
    assert (again["base_url"], again["model"]) == (openai_fake.url, "qwen2.5:7b")
    assert chat(client)[-1] == "done"
    assert [r.body["model"] for r in streamed(openai_fake)] == ["qwen2.5:7b"] * 2
    assert [(r.path, r.body["model"]) for r in streamed(claude)] == [
        ("/v1/messages", "claude-opus-5-5")]
    assert not any(CLAUDE_KEY in json.dumps(dict(r.headers)) for r in openai_fake.requests)


def test_an_endpoint_without_a_model_is_asked_for_one(client, openai_fake, snapshot):
    before = snapshot()
    response = client.put("/api/settings", json={"provider": "openai_compatible",
                                                 "base_url": openai_fake.url})
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "model"
    assert snapshot() == before


def test_each_provider_shows_what_it_remembers(client, claude, openai_fake):
    client.put("/api/settings", json={"provider": "openai_compatible", "context_window": 4096,
                                      "base_url": openai_fake.url, "model": "qwen2.5:7b"})
    providers = client.put("/api/settings", json={"provider": "anthropic"}).get_json()[
        "providers"]
    assert providers["openai_compatible"] == {
        "base_url": openai_fake.url, "model": "qwen2.5:7b", "context_window": 4096,
        "api_key": {"configured": False, "last4": None, "source": None}}
    assert providers["anthropic"]["model"] == "claude-opus-5-5"
    assert providers["anthropic"]["api_key"]["last4"] == "SWCH"


def test_test_connection_tests_the_model_chats_use(client, openai_fake):
    openai_fake.default = openai_replies.tool_use([("ping", {"word": "pong"})])
    client.put("/api/settings", json={"provider": "openai_compatible",
                                      "base_url": openai_fake.url, "model": "qwen2.5:7b"})
    report = client.post("/api/settings/test-connection", json={}).get_json()
    assert report["model"] == "qwen2.5:7b" and report["tools"]["non_streaming"] is True
    assert {r.body["model"] for r in openai_fake.requests if r.method == "POST"} == {
        "qwen2.5:7b"}


def test_test_connection_of_an_endpoint_without_a_model_names_the_one_it_tested(
        client, openai_fake):
    openai_fake.default = openai_replies.tool_use([("ping", {"word": "pong"})])
    report = client.post("/api/settings/test-connection", json={
        "provider": "openai_compatible", "base_url": openai_fake.url}).get_json()
    assert report["model"] in report["models"]
    assert {r.body["model"] for r in openai_fake.requests if r.method == "POST"} == {
        report["model"]}


def test_model_suggestions_come_from_the_chosen_endpoint(client, claude, openai_fake):
    claude_models = client.get("/api/settings/models").get_json()
    assert claude_models["provider"] == "anthropic"
    assert "claude-opus-5-5" in claude_models["models"] and "error" not in claude_models
    client.put("/api/settings", json={"provider": "openai_compatible",
                                      "base_url": openai_fake.url, "model": "qwen2.5:7b"})
    listed = client.get("/api/settings/models").get_json()
    assert listed == {"provider": "openai_compatible",
                      "models": ["gpt-4o-mini", "llama3.2:3b", "qwen2.5:7b"]}
    assert client.get("/api/settings/models?provider=nope").status_code == 400


def test_test_connection_to_claude_tests_the_chats_model(client, claude):
    claude.default = replies.text("ok")
    report = client.post("/api/settings/test-connection", json={}).get_json()
    assert report["reachable"] is True and "claude-opus-5-5" in report["models"]
    assert report["model"] == "claude-opus-5-5" and "error" not in report
    assert [r.body["model"] for r in claude.requests if r.path == "/v1/messages"] == [
        "claude-opus-5-5"]


def test_settings_stored_before_models_followed_providers_can_still_be_changed(
        app, client, openai_fake):
    from src.utils import provider
    from src.utils.storage.settings import set_setting

    set_setting(provider.get_db(app).conn(), "app", {"provider": "openai_compatible",
                                                     "base_url": openai_fake.url})
    assert client.put("/api/settings", json={"language": "de"}).status_code == 200
    fixed = client.put("/api/settings", json={"model": "qwen2.5:7b"}).get_json()
    assert fixed["model"] == "qwen2.5:7b"
