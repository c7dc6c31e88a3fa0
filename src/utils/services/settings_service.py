"""General settings (stored under the settings key "app") and the Anthropic API key.

A PUT is all or nothing: every field is checked before anything is written. The key is checked
with one cheap upstream call before it is stored; only `configured`, `last4` and `source` are
ever reported, never the key itself.
"""
import logging
import re

from ..logsafe import register_secret
from ..storage.settings import get_setting, set_setting
from . import validation as check
from .errors import ServiceError, invalid

log = logging.getLogger(__name__)
SETTINGS_KEY = "app"
MODEL_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,63}$")
EFFORTS = (None, "low", "medium", "high", "xhigh", "max")
from ..limits import SETTINGS_RANGES, SETTINGS_TEXT
from ..prompts import LANGUAGES
DEFAULTS = {"effort": None, "max_tokens": 2048, "context_limit": 40, "language": "en",
            "user_name": ""}
_KEY_RE = re.compile(r"^[\x21-\x7e]{16,512}$")


def _validate_field(name: str, value):
    if name == "model":
        return check.pattern(name, value, MODEL_RE, "must look like a model id "
                             "(lowercase letters, digits, '.' and '-', 2 to 64 characters)")
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

    FIELDS = ("model", "effort", "max_tokens", "context_limit", "language", "user_name")

    def __init__(self, db, secret_store, api_client, *, default_model: str,
                 env_api_key: str | None = None):
        self._db = db
        self._secrets = secret_store
        self._api = api_client
        self._defaults = {"model": default_model, **DEFAULTS}
        self._env_key = env_api_key or None

    def values(self) -> dict:
        """The six general settings, defaults filled in (what chat and cortex use)."""
        return self._merge(get_setting(self._db.conn(), SETTINGS_KEY, {}))

    def chosen_language(self) -> str | None:
        """The language the person set explicitly, or None (the interface then follows the
        browser's Accept-Language, while prompts keep the default)."""
        return self._valid_stored(get_setting(self._db.conn(), SETTINGS_KEY, {})).get("language")

    def get(self) -> dict:
        """The settings as the API shows them, with the API key status."""
        return {**self.values(), "api_key": self.api_key_status()}

    def update(self, patch: dict) -> dict:
        """Applies a partial update; any bad or unknown field is a 400 and nothing is written."""
        check.reject_unknown(patch, self.FIELDS)
        cleaned = {name: _validate_field(name, value) for name, value in patch.items()}
        if cleaned:
            with self._db.transaction():
                conn = self._db.conn()
                stored = get_setting(conn, SETTINGS_KEY, {})
                stored = stored if isinstance(stored, dict) else {}
                set_setting(conn, SETTINGS_KEY, {**stored, **cleaned})
            log.info("Settings changed: %s", ", ".join(sorted(cleaned)))
        return self.get()

    def api_key_status(self) -> dict:
        """`{configured, last4, source}`, where the source is "settings" or "environment"."""
        stored = self._secrets.load_api_key()
        key, source = (stored, "settings") if stored else (self._env_key, "environment")
        if not key:
            return {"configured": False, "last4": None, "source": None}
        return {"configured": True, "last4": key[-4:] if len(key) >= 8 else None,
                "source": source}

    def set_api_key(self, data: dict) -> dict:
        """Checks the key with one upstream call, then stores and uses it; returns the status."""
        check.reject_unknown(data, ("api_key",))
        key = data.get("api_key")
        if not isinstance(key, str):
            raise invalid("api_key", "is required and must be a string")
        key = key.strip()
        if not _KEY_RE.fullmatch(key):
            raise invalid("api_key", "must be 16 to 512 printable characters without spaces")
        register_secret(key)
        result = self._api.check_key(key)
        if not result.success:
            raise _rejection(result, key)
        self._secrets.save_api_key(key)
        self._api.set_api_key(key)
        log.info("API key stored (ending in %s)", key[-4:])
        return self.api_key_status()

    def delete_api_key(self) -> dict:
        """Removes the stored key; the environment's key (if any) is used again."""
        self._secrets.delete_api_key()
        self._api.set_api_key(self._env_key)
        log.info("Stored API key removed")
        return self.api_key_status()

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
