"""`POST /api/settings/test-connection`: probe an endpoint with the given or current settings.

Fields left out come from the settings (and the stored key of that provider), so the settings
page can test what it shows before saving it; nothing is stored either way.
"""
from ..api_request import Connection
from ..logsafe import register_secret
from . import provider_settings, validation as check
from .errors import invalid

FIELDS = ("provider", "base_url", "api_key", "model")


class ConnectionTester:
    """Builds the connection to test and asks the API client to probe it."""

    def __init__(self, settings, api_client):
        self._settings = settings
        self._api = api_client

    def run(self, data: dict) -> dict:
        """`{reachable, models, tools: {non_streaming, streaming}, context_window, error?}`."""
        check.reject_unknown(data, FIELDS)
        provider = self._settings.provider_of(data)
        current = self._settings.connection()
        same = provider == current.provider
        base_url = provider_settings.base_url(data["base_url"]) if "base_url" in data else (
            current.base_url if same else self._settings.base_url_of(provider))
        key = data.get("api_key")
        if key is not None and (not isinstance(key, str) or len(key) > 512):
            raise invalid("api_key", "must be a string of at most 512 characters")
        key = (key or "").strip() or self._settings.key_of(provider)[0]
        register_secret(key)
        model = data.get("model")
        if model is not None:
            model = provider_settings.validate("model", model)
        return self._api.test_connection(Connection(provider, base_url, key), model)
