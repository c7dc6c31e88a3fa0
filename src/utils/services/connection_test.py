"""`POST /api/settings/test-connection`: probe an endpoint with the given or current settings.

Fields left out come from the settings, so the settings page can test what it shows before
saving it; nothing is stored either way. The key sent is the one given (`api_key`, null for
none) or the one that belongs to the URL probed (key_ring.py): a stored key is never sent to
another URL, and naming another URL without its key is `409 key_bound_to_url`. Without
`model`, the model chats would use with that provider is tested.
"""
from ..api_request import ApiClient, Connection
from ..logsafe import register_secret
from ..models import parse
from ..models.settings import ConnectionTest
from .settings_service import SettingsService


class ConnectionTester:
    """Builds the connection to test and asks the API client to probe it."""

    def __init__(self, settings: SettingsService, api_client: ApiClient):
        self._settings = settings
        self._api = api_client

    def run(self, data: dict) -> dict:
        """`{reachable, models, model, tools: {non_streaming, streaming}, context_window,
        error?}`."""
        body = parse(ConnectionTest, data)
        given = body.model_fields_set
        provider = body.provider or self._settings.values().provider
        if "base_url" in given:
            url = body.base_url or self._settings.env_base_url(provider)
        else:
            url = self._settings.base_url_of(provider)
        if "api_key" in given:
            key = (body.api_key or "").strip() or None
            register_secret(key)
        else:
            if "base_url" in given:
                self._settings.keys.refuse_move(provider, url)
            key = self._settings.keys.key_for(provider, url)[0]
        model = body.model or self._settings.model_of(provider)
        return self._api.test_connection(Connection(provider, url, key), model)

    def models(self, provider: str | None) -> dict:
        """`{provider, models, error?}`: what the provider's saved endpoint lists, asked with
        the key that belongs to it (the settings page's model suggestions)."""
        provider = self._settings.provider_of({"provider": provider})
        url = self._settings.base_url_of(provider)
        key = self._settings.keys.key_for(provider, url)[0]
        return {"provider": provider, **self._api.list_models(Connection(provider, url, key))}

