"""General settings (stored under the settings key "app") and the API key of each provider.

A PUT is all or nothing: every field is checked before anything is written. A key is checked
with one cheap upstream call before it is stored; only `configured`, `last4` and `source` are
ever reported, never the key itself. The provider fields live in provider_settings.py;
`connection()` is what the API client reads before every request.
"""
import logging
import re

from ..api_request import PROVIDERS, Connection
from ..logsafe import register_secret
from . import provider_settings
from ..storage import user_personas
from ..storage.settings import get_setting, set_setting
from . import validation as check
from .errors import ServiceError, invalid

log = logging.getLogger(__name__)
SETTINGS_KEY = "app"
EFFORTS = (None, "low", "medium", "high", "xhigh", "max")
from ..limits import SETTINGS_RANGES, SETTINGS_TEXT
from ..prompts import LANGUAGES
DEFAULTS = {"effort": None, "max_tokens": 2048, "context_limit": 40, "language": "en",
            "user_name": ""}
_KEY_RE = re.compile(r"^[\x21-\x7e]{16,512}$")


def _validate_field(name: str, value):
    if name in ("provider", "model", "base_url", "context_window"):
        return provider_settings.validate(name, value)
    if name == "effort":
        return check.choice(name, value, EFFORTS)
    if name in SETTINGS_RANGES:
        low, high = SETTINGS_RANGES[name]
        return check.integer(name, value, low=low, high=high)
    if name == "language":
        return check.choice(name, value, LANGUAGES)
    return check.text(name, value, max_len=SETTINGS_TEXT[name], single_line=True)


class SettingsService:
    """Reads and validates the app settings; sets, checks and removes the API key."""

    FIELDS = ("model", "effort", "max_tokens", "context_limit", "language", "user_name",
              "provider", "base_url", "context_window")

    def __init__(self, db, secret_store, api_client, *, default_model: str,
                 env_api_key: str | None = None, provider: str = "anthropic",
                 env_keys: dict | None = None, env_base_urls: dict | None = None):
        self._db = db
        self._secrets = secret_store
        self._api = api_client
        self._defaults = {"model": default_model, **DEFAULTS, "provider": provider,
                          "base_url": None, "context_window": None}
        self._env_keys = {"anthropic": env_api_key or None, **(env_keys or {})}
        self._env_base_urls = env_base_urls or {}
        self._env_key = env_api_key or None

    def values(self) -> dict:
        """The general settings, defaults filled in (what chat and cortex use); `base_url` is
        the environment's for the provider unless one was set."""
        conn = self._db.conn()
        merged = self._merge(get_setting(conn, SETTINGS_KEY, {}))
        default = user_personas.get_default(conn)
        if default is not None:
            merged["user_name"] = default["name"]
        if merged["base_url"] is None:
            merged["base_url"] = self._env_base_urls.get(merged["provider"])
        return merged

    def connection(self) -> Connection:
        """The endpoint requests go to now, with that provider's key (read per request)."""
        values = self.values()
        provider = values["provider"]
        # Anthropic's key is read by the client's own key_source; only the other is needed here.
        key = self.key_of(provider)[0] if provider == "openai_compatible" else None
        return Connection(provider, values["base_url"], key, values["context_window"])

    def chosen_language(self) -> str | None:
        """The language the person set explicitly, or None (the interface then follows the
        browser's Accept-Language, while prompts keep the default)."""
        return self._valid_stored(get_setting(self._db.conn(), SETTINGS_KEY, {})).get("language")

    def get(self) -> dict:
        """The settings as the API shows them, with the current provider's key status and
        whether chat can be used (`is_ready`: a key, or a base URL for a local endpoint)."""
        values = self.values()
        return {**values, "api_key": self.api_key_status(values["provider"]),
                "is_ready": bool(self.key_of(values["provider"])[0]) or (
                    values["provider"] == "openai_compatible" and bool(values["base_url"]))}

    def update(self, patch: dict) -> dict:
        """Applies a partial update; any bad or unknown field is a 400 and nothing is written."""
        check.reject_unknown(patch, self.FIELDS)
        cleaned = {name: _validate_field(name, value) for name, value in patch.items()}
        if cleaned:
            with self._db.transaction():
                conn = self._db.conn()
                stored = get_setting(conn, SETTINGS_KEY, {})
                stored = stored if isinstance(stored, dict) else {}
                current = self._merge(stored)["provider"]
                set_setting(conn, SETTINGS_KEY, provider_settings.apply(stored, cleaned, current))
                _rename_default(conn, cleaned)
            log.info("Settings changed: %s", ", ".join(sorted(cleaned)))
        return self.get()

    def provider_of(self, data: dict, field: str = "provider") -> str:
        """The provider a request names (400 if unknown), else the current one."""
        value = data.get(field)
        if value is None:
            return self.values()["provider"]
        if value not in PROVIDERS:
            raise invalid(field, f"must be one of {', '.join(PROVIDERS)}")
        return value

    def key_of(self, provider: str) -> tuple[str | None, str | None]:
        stored = self._secrets.load_api_key(provider)
        if stored:
            return stored, "settings"
        env = self._env_keys.get(provider)
        return (env, "environment") if env else (None, None)

    def api_key_status(self, provider: str = "anthropic") -> dict:
        """`{configured, last4, source}`, where the source is "settings" or "environment"."""
        key, source = self.key_of(provider)
        if not key:
            return {"configured": False, "last4": None, "source": None}
        return {"configured": True, "last4": key[-4:] if len(key) >= 8 else None,
                "source": source}

    def set_api_key(self, data: dict) -> dict:
        """Checks the key with one upstream call, then stores it for its provider (`provider`,
        default the current one) and uses it; returns the status."""
        check.reject_unknown(data, ("api_key", "provider"))
        provider = self.provider_of(data)
        key = data.get("api_key")
        if not isinstance(key, str):
            raise invalid("api_key", "is required and must be a string")
        key = key.strip()
        if not _KEY_RE.fullmatch(key):
            raise invalid("api_key", "must be 16 to 512 printable characters without spaces")
        register_secret(key)
        if provider == "anthropic":
            result = self._api.check_key(key)
        elif not self.base_url_of(provider):
            raise invalid("provider", "set the base URL of the OpenAI-compatible endpoint "
                                      "before its key (the key is checked there)")
        else:
            result = self._api.check_openai_key(key, self.base_url_of(provider))
        if not result.success:
            raise _rejection(result, key)
        self._secrets.save_api_key(key, provider)
        if provider == "anthropic":
            self._api.set_api_key(key)
        log.info("API key for %s stored (ending in %s)", provider, key[-4:])
        return self.api_key_status(provider)

    def delete_api_key(self, provider: str | None = None) -> dict:
        """Removes the provider's stored key; the environment's key (if any) is used again."""
        provider = self.provider_of({"provider": provider})
        self._secrets.delete_api_key(provider)
        if provider == "anthropic":
            self._api.set_api_key(self._env_key)
        log.info("Stored API key for %s removed", provider)
        return self.api_key_status(provider)

    def base_url_of(self, provider: str) -> str | None:
        values = self.values()
        if values["provider"] == provider:
            return values["base_url"]
        stored = get_setting(self._db.conn(), SETTINGS_KEY, {}) or {}
        parked = (stored.get("by_provider") or {}).get(provider) or {}
        return parked.get("base_url") or self._env_base_urls.get(provider)

    def _merge(self, stored) -> dict:
        """Defaults overlaid with the stored values that are still valid."""
        return {**self._defaults, **self._valid_stored(stored)}

    def _valid_stored(self, stored) -> dict:
        """Only what was explicitly set and still passes the checks (defaults stay live)."""
        valid: dict = {}
        if not isinstance(stored, dict):
            return valid
        for name in self.FIELDS:
            if name in stored:
                try:
                    valid[name] = _validate_field(name, stored[name])
                except ServiceError:
                    log.warning("Ignoring invalid stored setting %s", name)
        return valid


def _rename_default(conn, cleaned: dict) -> None:
    """`user_name` is the default user persona's name once there is one (docs/about-you.md):
    setting it renames that persona; an empty name cannot, so it is refused (nothing written)."""
    if "user_name" not in cleaned:
        return
    default = user_personas.get_default(conn)
    if default is None:
        return
    if not cleaned["user_name"]:
        raise invalid("user_name", "is the default user persona's name and cannot be empty "
                                   "(change it under About you)")
    user_personas.update(conn, default["id"], {"name": cleaned["user_name"]})


def _rejection(result, key: str) -> ServiceError:
    """The error for a key the upstream check did not accept (the key is not in the message)."""
    if result.error == "authentication_failed":
        return ServiceError(400, "invalid_api_key",
                            "The API key was rejected by the API: check it and try again.",
                            upstream_code=result.error)
    code = result.error or "api_error"
    message = (result.error_message or f"The API call failed ({code}).").replace(key, "[redacted]")
    return ServiceError(503 if result.retryable else 502, code,
                        f"The key could not be checked, so it was not stored. {message}",
                        retryable=bool(result.retryable))
