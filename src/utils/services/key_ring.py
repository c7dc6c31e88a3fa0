"""Which API key may go to which URL (DESIGN §15 "Keys").

A key belongs to one endpoint: a key stored in `secrets.json` to the base URL it was saved (and
checked) for; `ANTHROPIC_API_KEY` to `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY` to `OPENAI_BASE_URL`
(each else the provider's official URL). A request to any other URL carries no key, and a
settings change or connection test that names another URL without giving its key is refused
(`409 key_bound_to_url`), so nobody holding the access token (or any local process, without
one) can point the app at a listener and collect the key. URLs are compared in their canonical
form (`provider_settings.endpoint`).
"""
from __future__ import annotations

import logging

from .errors import ServiceError
from .provider_settings import endpoint
from .secrets import SecretStore

log = logging.getLogger(__name__)
KEY_BOUND = "key_bound_to_url"


class KeyRing:
    """The stored and the environment's keys of each provider, each with the URL it belongs to."""

    def __init__(self, secret_store: SecretStore, env_keys: dict[str, str | None],
                 env_base_urls: dict[str, str | None]):
        self._secrets = secret_store
        self._env_keys = {name: value for name, value in env_keys.items() if value}
        self._env_urls = env_base_urls

    def key_for(self, provider: str, url: str | None) -> tuple[str | None, str | None]:
        """`(key, source)` of the key that belongs to `url` (None: the official URL), source
        "settings" or "environment"; `(None, None)` when no key belongs there."""
        target = endpoint(provider, url)
        stored, bound = self._secrets.load_binding(provider)
        if stored and bound is not None and endpoint(provider, bound) == target:
            return stored, "settings"
        env = self._env_keys.get(provider)
        if env and endpoint(provider, self._env_urls.get(provider)) == target:
            return env, "environment"
        return None, None

    def would_move(self, provider: str, url: str | None) -> bool:
        """Whether a key of `provider` exists that belongs somewhere else than `url` (so using
        `url` without giving its key leaves that key behind, and the caller must say so)."""
        if self.key_for(provider, url)[0]:
            return False
        stored, _ = self._secrets.load_binding(provider)
        return bool(stored or self._env_keys.get(provider))

    def refuse_move(self, provider: str, url: str | None) -> None:
        """A 409 `key_bound_to_url` when `url` is not where the provider's key belongs."""
        if self.would_move(provider, url):
            raise ServiceError(
                409, KEY_BOUND,
                "The saved API key belongs to another address and is never sent elsewhere: "
                "give the key for this address as api_key in the same request (null to use "
                "this address without a key).", field="api_key")

    def store(self, key: str, provider: str, url: str | None) -> None:
        """Stores `key` for `provider`, bound to `url` (None: the official URL)."""
        self._secrets.save_api_key(key, provider, endpoint(provider, url))

    def bind_unbound(self, provider: str, url: str | None) -> None:
        """Binds a key stored before keys had URLs to `url`, the provider's URL when the app
        starts (where it was being sent until then); a bound key is left alone."""
        stored, bound = self._secrets.load_binding(provider)
        if stored and bound is None:
            self.store(stored, provider, url)
            log.info("The stored %s key now belongs to its current base URL", provider)
