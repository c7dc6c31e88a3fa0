"""Settings and the API key: validation, persistence across restarts, and a key that never leaks."""
import json
import logging
import os
import stat

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.storage.settings import set_setting
from tests.fakes.claude import replies

GOOD_KEY = "sk-ant-api03-good-test-key-0123456789abcdefWXYZ"
BAD_KEY = "sk-ant-api03-rejected-test-key-9876543210zyxw"
ENV_KEY = "sk-ant-api03-environment-key-00000000000ENVK"
DEFAULTS = {"model": "claude-test-1", "effort": None, "max_tokens": 2048, "context_limit": 40,
            "language": "en", "user_name": "", "provider": "anthropic", "base_url": None,
            "context_window": None, "is_ready": False}
NO_KEY = {"configured": False, "last4": None, "source": None}


@pytest.fixture
def app_config(app_config, claude):
    """The app talks to the Claude fake."""
    return {**app_config, "MODEL": "claude-test-1", "ANTHROPIC_BASE_URL": claude.url}


@pytest.fixture
def stored(rows):
    """The raw value stored under the "app" settings key (None when nothing was written)."""

    def read():
        found = rows("SELECT value FROM settings WHERE key = 'app'")
        return json.loads(found[0]["value"]) if found else None

    return read


def _shown(response) -> dict:
    """The settings without `providers` (what each provider remembers; tested apart)."""
    return {name: value for name, value in response.get_json().items() if name != "providers"}


def test_get_returns_defaults_and_no_key(client, stored, claude):
    response = client.get("/api/settings")
    assert response.status_code == 200
    assert _shown(response) == {**DEFAULTS, "base_url": claude.url, "api_key": NO_KEY}
    assert stored() is None


def test_put_partial_update_round_trip(client, stored, claude):
    response = client.put("/api/settings", json={"effort": "high", "context_limit": 12,
                                                 "user_name": " Sam "})
    assert response.status_code == 200
    changed = {"effort": "high", "context_limit": 12, "user_name": "Sam"}
    assert _shown(response) == {**DEFAULTS, **changed, "base_url": claude.url,
                                "api_key": NO_KEY}
    assert stored() == changed
    response = client.put("/api/settings", json={"effort": None, "model": "claude-opus-4.1"})
    assert response.get_json()["model"] == "claude-opus-4.1"
    assert stored() == {**changed, "effort": None, "model": "claude-opus-4.1"}


def test_defaults_that_were_never_set_follow_the_config(app_config, client):
    client.put("/api/settings", json={"language": "de"})
    restarted = create_app({**app_config, "MODEL": "claude-other-2"}).test_client()
    settings = restarted.get("/api/settings").get_json()
    assert (settings["model"], settings["language"]) == ("claude-other-2", "de")


def test_invalid_stored_values_fall_back_to_defaults(app, client, stored):
    set_setting(provider.get_db(app).conn(), "app", {"max_tokens": -5, "language": "de"})
    settings = client.get("/api/settings").get_json()
    assert (settings["max_tokens"], settings["language"]) == (2048, "de")


@pytest.mark.parametrize("field,value", [
    ("model", ""), ("model", "-claude"), ("model", "model\n"), ("model", "../x y"),
    ("model", "claude sonnet"), ("model", "x" * 201), ("model", 5), ("model", None),
    ("provider", "openai"), ("provider", None), ("base_url", "ftp://host/v1"),
    ("base_url", "http://user:secret@host/v1"), ("base_url", "localhost:11434"),
    ("base_url", "http://host/v1?key=abc"), ("base_url", 5), ("context_window", 100),
    ("base_url", "http://[::1"), ("base_url", "http://[::1/v1"),  # urlsplit raised: a 500
    ("base_url", "http://\u017f.example"), ("base_url", "http://\u0131.example"),  # ſ, ı
    ("base_url", "http://[::1]x/v1"), ("base_url", "http://host:/v1"),  # what follows the host
    ("context_window", "8192"), ("context_window", 1.5),
    ("effort", "extreme"), ("effort", ""), ("effort", 1),
    ("max_tokens", 0), ("max_tokens", 64001), ("max_tokens", "100"), ("max_tokens", 1.5),
    ("max_tokens", True), ("max_tokens", None),
    ("context_limit", 3), ("context_limit", 401), ("context_limit", 20.0),
    ("language", "fr"), ("language", None), ("language", "EN"),
    ("user_name", "x" * 81), ("user_name", "a\nb"), ("user_name", None), ("user_name", 3),
])
def test_put_rejects_each_bad_field_and_writes_nothing(client, stored, field, value):
    client.put("/api/settings", json={"language": "de"})
    response = client.put("/api/settings", json={"max_tokens": 100, field: value})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert (error["code"], error["field"]) == ("validation_error", field)
    assert error["message"].startswith(f"{field}: ")
    assert stored() == {"language": "de"}


def test_put_rejects_unknown_keys_and_non_json(client, stored):
    response = client.put("/api/settings", json={"language": "de", "temperature": 0.3})
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "unknown_field"
    assert response.get_json()["error"]["field"] == "temperature"
    assert client.put("/api/settings", data="language=de").status_code == 415
    assert client.put("/api/settings", json="de").status_code == 400
    assert stored() is None


def test_settings_survive_a_restart(app_config, client):
    client.put("/api/settings", json={"language": "de", "max_tokens": 4000})
    restarted = create_app(app_config).test_client()
    settings = restarted.get("/api/settings").get_json()
    assert (settings["language"], settings["max_tokens"]) == ("de", 4000)


def _secrets(data_dir):
    return data_dir / "secrets.json"


def test_good_key_is_checked_upstream_then_stored_0600(client, claude, data_dir, caplog,
                                                         app_config):
    caplog.set_level(logging.DEBUG)
    claude.default = replies.text("ok")
    bodies = [client.get("/api/settings")]
    response = client.put("/api/settings/api-key", json={"api_key": f"  {GOOD_KEY} "})
    bodies.append(response)
    assert response.status_code == 200
    assert response.get_json() == {"api_key": {"configured": True, "last4": "WXYZ",
                                                "source": "settings"}}
    assert len(claude.requests) == 1
    assert GOOD_KEY in json.dumps(dict(claude.requests[0].headers))
    assert stat.S_IMODE(os.stat(_secrets(data_dir)).st_mode) == 0o600
    assert json.loads(_secrets(data_dir).read_text()) == {"anthropic_api_key": GOOD_KEY,
                                                          "anthropic_base_url": claude.url}
    bodies.append(client.get("/api/settings"))
    assert bodies[-1].get_json()["api_key"]["configured"] is True
    restarted = create_app(app_config).test_client()
    bodies.append(restarted.get("/api/settings"))
    assert bodies[-1].get_json()["api_key"] == {"configured": True, "last4": "WXYZ",
                                                "source": "settings"}
    _assert_never_leaked(GOOD_KEY, bodies, caplog)


def test_rejected_key_is_400_and_nothing_is_stored(client, claude, data_dir, caplog):
    caplog.set_level(logging.DEBUG)
    claude.default = replies.http_error(401, "authentication_error", "invalid x-api-key")
    response = client.put("/api/settings/api-key", json={"api_key": BAD_KEY})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "invalid_api_key"
    assert error["upstream_code"] == "authentication_failed"
    assert len(claude.requests) == 1
    assert not _secrets(data_dir).exists()
    settings = client.get("/api/settings")
    assert settings.get_json()["api_key"] == NO_KEY
    _assert_never_leaked(BAD_KEY, [response, settings], caplog)


@pytest.mark.parametrize("reply,status,code", [
    (replies.http_error(529, "overloaded_error", "Overloaded"), 503, "overloaded"),
    (replies.http_error(429, "rate_limit_error", "Slow down"), 503, "rate_limited"),
    (replies.http_error(400, "invalid_request_error", "Bad"), 502, "invalid_request"),
])
def test_upstream_failure_during_check_stores_nothing(client, claude, data_dir, reply, status,
                                                      code):
    claude.default = reply
    response = client.put("/api/settings/api-key", json={"api_key": GOOD_KEY})
    assert response.status_code == status
    assert response.get_json()["error"]["code"] == code
    assert GOOD_KEY not in response.get_data(as_text=True)
    assert not _secrets(data_dir).exists()


@pytest.mark.parametrize("body", [
    {}, {"api_key": ""}, {"api_key": 12345678901234567}, {"api_key": "short"},
    {"api_key": "sk-ant with spaces in the middle"}, {"api_key": "x" * 513},
    {"api_key": GOOD_KEY, "extra": 1},
])
def test_malformed_key_is_refused_without_an_upstream_call(client, claude, data_dir, body):
    response = client.put("/api/settings/api-key", json=body)
    assert response.status_code == 400
    assert claude.requests == []
    assert not _secrets(data_dir).exists()


@pytest.fixture
def env_key_config(app_config):
    return {**app_config, "ANTHROPIC_API_KEY": ENV_KEY}


def test_environment_key_is_reported_and_restored_after_delete(env_key_config, claude,
                                                                 data_dir, caplog):
    caplog.set_level(logging.DEBUG)
    client = create_app(env_key_config).test_client()
    env_status = {"configured": True, "last4": "ENVK", "source": "environment"}
    bodies = [client.get("/api/settings")]
    assert bodies[0].get_json()["api_key"] == env_status
    claude.default = replies.text("ok")
    bodies.append(client.put("/api/settings/api-key", json={"api_key": GOOD_KEY}))
    assert bodies[-1].get_json()["api_key"]["source"] == "settings"
    bodies.append(client.delete("/api/settings/api-key"))
    assert bodies[-1].status_code == 200
    assert bodies[-1].get_json() == {"api_key": env_status}
    assert not _secrets(data_dir).exists()
    _assert_never_leaked(GOOD_KEY, bodies, caplog)
    _assert_never_leaked(ENV_KEY, bodies, caplog)


def test_delete_without_any_key_reports_not_configured(client, data_dir):
    response = client.delete("/api/settings/api-key")
    assert response.status_code == 200
    assert response.get_json() == {"api_key": NO_KEY}


def _assert_never_leaked(key, responses, caplog):
    for response in responses:
        assert key not in response.get_data(as_text=True)
        assert key[-12:] not in response.get_data(as_text=True)
    for record in caplog.records:
        assert key not in record.getMessage()
        assert key not in str(record.exc_text or "")
