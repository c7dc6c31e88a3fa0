"""General settings (stored under the settings key "app") and the API key of each provider.

A PUT is all or nothing: every field is checked before anything is written. A key is checked
with one cheap upstream call at the URL it will be sent to before it is stored, bound to that
URL (key_ring.py: a key goes nowhere else); only `configured`, `last4` and `source` are ever
reported, never the key itself. The provider fields live in provider_settings.py (each
provider keeps its own URL, model and window); `connection()` is what the API client reads
before every request: the URL and the key that belongs to it, in one read (a chat turn's
request takes it from the settings its prompt read, `ChatPrompt.config`).
"""
import logging
import sqlite3
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from ..api_request import (
    DEFAULT_MODEL,
    PROVIDERS,
    ApiResponse,
    Connection,
    EndpointChecks,
)
from ..logsafe import register_secret
from ..models import parse
from ..models.settings import (
    ApiKeyBody,
    ApiKeyStatus,
    AppSettings,
    CortexSettings,
    ProviderMemory,
    Settings,
    SettingsPatch,
)
from ..models.user_personas import UserPersona
from ..storage import Database, generations, settings_store as store, user_personas
from ..storage.generations import ConfigCache
from . import provider_settings
from .errors import ServiceError, invalid
from .key_ring import KeyRing
from .secrets import SecretStore

log = logging.getLogger(__name__)
T = TypeVar("T")
SETTINGS_KEY = store.APP
_DEFAULT_USER = ("user_persona", "default")
DEFAULTS = AppSettings().model_dump(exclude={"model", "provider", "base_url", "context_window"})


class TurnSettings(NamedTuple):
    """The settings one chat turn's prompt reads (`SettingsService.turn`)."""

    app: AppSettings
    cortex: CortexSettings
    default_user: UserPersona | None


class SettingsService:
    """Reads and validates the app settings; sets, checks and removes the API key."""

    FIELDS = store.APP_FIELDS

    def __init__(self, db: Database, secret_store: SecretStore, key_checks: EndpointChecks, *,
                 default_model: str, env_api_key: str | None = None,
                 provider: str = "anthropic", env_keys: dict[str, str | None] | None = None,
                 env_base_urls: dict[str, str | None] | None = None,
                 cache: ConfigCache | None = None):
        self._db = db
        self.cache = cache or ConfigCache()  # the process's, shared with the chat's prompt
        self._secrets = secret_store
        self._checks = key_checks  # EndpointChecks: a new key is checked where it goes
        self._env_provider = provider
        self._defaults = {**DEFAULTS, "provider": provider, "base_url": None,
                          "context_window": None}
        # PERSONA_MODEL is the model of the environment's provider; the other starts from
        # Claude's default (Anthropic) or none at all (an endpoint's models are its own).
        self._models = {"anthropic": DEFAULT_MODEL, "openai_compatible": None,
                        provider: default_model}
        self._env_base_urls = env_base_urls or {}
        self.keys = KeyRing(secret_store, {"anthropic": env_api_key, **(env_keys or {})},
                            self._env_base_urls)
        self._checked = lru_cache(maxsize=8)(self._check)

    def bind_stored_keys(self) -> None:
        """Start-up: a key stored before keys were bound to URLs belongs to the base URL its
        provider uses now (where it was being sent)."""
        for provider in PROVIDERS:
            self.keys.bind_unbound(provider, self.base_url_of(provider))

    def values(self) -> AppSettings:
        """The general settings, defaults filled in (what chat and cortex use); `base_url` is
        the environment's for the provider unless one was set."""
        conn = self._db.conn()
        return self._values(store.app_text(conn), user_personas.get_default(conn))

    def turn(self, generation: int | None = None) -> TurnSettings:
        """What a chat turn's prompt reads of the settings: `values()`, the cortex settings and
        the default user persona, as kept in the process's `cache` while the `config` counter
        stands at `generation` (read by the caller before, `storage/generations.py`; None:
        read now). A change by any process raises the counter, so the next turn reads them
        again; an unchanged counter costs no statement here."""
        conn = self._db.conn()
        if generation is None:
            generation = generations.read(conn).config
        text, cortex = store.app_and_cortex_kept(conn, self.cache, generation)
        default = self.cache.get(generation, _DEFAULT_USER,
                                 lambda: user_personas.get_default(conn))
        return TurnSettings(self._values(text, default), cortex, default)

    def connection(self, values: AppSettings | None = None) -> Connection:
        """The endpoint requests go to now, with the key that belongs to it (read per request;
        a key saved for another URL is not sent). `values`: the settings the caller read for
        this very request (a chat turn's, `turn`), else the row is read now; the user name is
        not part of it, so no user persona is read."""
        if values is None:  # only read here: the checked values themselves, not a copy
            values = self._checked(store.app_text(self._db.conn()), None)
        key = self.keys.key_for(values.provider, values.base_url)[0]
        return Connection(values.provider, values.base_url, key, values.context_window)

    def _values(self, text: str | None, default: UserPersona | None) -> AppSettings:
        """`values()` of the stored "app" text and the default user persona (None: none, or
        not read: the stored `user_name` stands); a copy the caller may change."""
        return self._checked(text, default.name if default else None).model_copy()

    def _check(self, text: str | None, user_name: str | None) -> AppSettings:
        """`_values` itself, checked field by field (about 15 µs): `_checked` keeps the last
        few, so a turn's two reads of an unchanged row check it once. The row is read every
        time (another process may write it); only what the same text gives is reused."""
        merged = self._merge(store.app_of(text))
        if user_name is not None:
            merged["user_name"] = user_name
        if merged["base_url"] is None:
            merged["base_url"] = self._env_base_urls.get(merged["provider"])
        return AppSettings.model_validate(merged)

    def chosen_language(self) -> str | None:
        """The language the person set explicitly, or None (the interface then follows the
        browser's Accept-Language, while prompts keep the default)."""
        return store.app_valid(self._db.conn()).get("language")

    def get(self) -> Settings:
        """The settings as the API shows them, with the current provider's key status, whether
        chat can be used (`is_ready`: a key, or a base URL for a local endpoint) and what each
        provider remembers (`providers`: base URL, model, window, key status)."""
        values = self.values()
        provider = values.provider
        return Settings.model_validate({
            **values.model_dump(), "api_key": self.api_key_status(provider),
            "is_ready": bool(self.key_of(provider)[0]) or (
                provider == "openai_compatible" and bool(values.base_url)),
            "providers": {name: self.remembered(name) for name in PROVIDERS}})

    def remembered(self, provider: str) -> ProviderMemory:
        """What `provider` would use if chosen now: base URL, model, window and key status."""
        values = self.values()
        if values.provider == provider:
            fields = values.model_dump(include=set(provider_settings.PER_PROVIDER))
        else:
            stored = store.app_stored(self._db.conn())
            parked = (stored.get("by_provider") or {}).get(provider) or {}
            fields = {"model": self._models.get(provider), "context_window": None,
                      **self._valid_parked(parked),
                      "base_url": self.base_url_of(provider)}
        return ProviderMemory(**fields, api_key=self.api_key_status(provider))

    def update(self, patch: dict) -> Settings:
        """Applies a partial update; any bad or unknown field is a 400 and nothing is written.

        A new `base_url` for a provider whose key belongs to another URL needs `api_key` in the
        same request (the key for the new URL, checked there first, or null for none);
        without it the answer is `409 key_bound_to_url` (the key is never moved)."""
        body = parse(SettingsPatch, patch).given()
        cleaned = {name: value for name, value in body.items() if name != "api_key"}
        key = self._given_key(body)
        planned = self._planned(cleaned, "api_key" in patch)[1:]
        if key is not None:  # checked upstream outside the transaction, then re-planned in it
            self._check_key(key, *planned)
        with self._db.transaction():
            result, *target = self._planned(cleaned, "api_key" in patch)
            if key is not None and tuple(target) != planned:
                raise ServiceError(409, "settings_changed", "The settings changed while the key "
                                   "was being checked: try again.")
            if cleaned:
                store.save_app(self._db.conn(), result)
                _rename_default(self._db.conn(), cleaned)
        if key is not None:
            self.keys.store(key, *planned)
            log.info("API key for %s stored with its base URL (ending in %s)", planned[0],
                     key[-4:])
        if cleaned:
            log.info("Settings changed: %s", ", ".join(sorted(cleaned)))
        return self.get()

    def _planned(self, cleaned: dict[str, Any], key_given: bool
                 ) -> tuple[dict[str, Any], str, str | None]:
        """The stored settings after `cleaned`, the provider then current and its base URL;
        refuses a change that would leave the model unset or move a key (400 / 409)."""
        stored = store.app_stored(self._db.conn())
        current = self._merge(stored)["provider"]
        result = provider_settings.apply(stored, cleaned, current)
        provider = self._merge(result)["provider"]
        if provider != current:
            self._fill_model(result, provider)
        url = self._valid_stored(result).get("base_url") or self._env_base_urls.get(provider)
        if "base_url" in cleaned and not key_given:
            self.keys.refuse_move(provider, url)
        return result, provider, url

    def _fill_model(self, result: dict[str, Any], provider: str) -> None:
        """A provider switched to has its model stored (the cortex reads the stored one): its
        own, its default, or for an endpoint with no default a 400 asking for one."""
        if result.get("model"):
            return
        default = self._models.get(provider)
        if default is None:
            raise invalid("model", "choose the model this endpoint should use (Test connection "
                                   "lists the models it offers)")
        if provider != self._env_provider:
            result["model"] = default

    @staticmethod
    def _given_key(body: dict[str, Any]) -> str | None:
        """The (checked, trimmed) `api_key` of a settings PUT; None: absent or null."""
        key = body.get("api_key")
        if key is not None:
            register_secret(key)
        return key

    def provider_of(self, data: dict, field: str = "provider") -> str:
        """The provider a request names (400 if unknown), else the current one."""
        value = data.get(field)
        if value is None:
            return self.values().provider
        if value not in PROVIDERS:
            raise invalid(field, f"must be one of {', '.join(PROVIDERS)}")
        return value

    def key_of(self, provider: str) -> tuple[str | None, str | None]:
        """`(key, source)` for the provider's current base URL (a key bound elsewhere: none)."""
        return self.keys.key_for(provider, self.base_url_of(provider))

    def api_key_status(self, provider: str = "anthropic") -> ApiKeyStatus:
        """`{configured, last4, source}`, where the source is "settings" or "environment"."""
        key, source = self.key_of(provider)
        if not key:
            return ApiKeyStatus(configured=False, last4=None, source=None)
        return ApiKeyStatus.model_validate({"configured": True, "source": source,
                                            "last4": key[-4:] if len(key) >= 8 else None})

    def set_api_key(self, data: dict) -> ApiKeyStatus:
        """Checks the key with one upstream call at the provider's base URL, then stores it
        for that provider (`provider`, default the current one), bound to that URL."""
        body = parse(ApiKeyBody, _secret_first(data))
        register_secret(body.api_key)
        provider = body.provider or self.values().provider
        key = body.api_key
        url = self.base_url_of(provider)
        self._check_key(key, provider, url)
        self.keys.store(key, provider, url)
        log.info("API key for %s stored (ending in %s)", provider, key[-4:])
        return self.api_key_status(provider)

    def _check_key(self, key: str, provider: str, url: str | None) -> None:
        """One upstream call with `key` at `url` (where it will be sent); a 4xx/5xx if refused."""
        if provider == "anthropic":
            result = self._checks.check_key(key, url)
        elif not url:
            raise invalid("provider", "set the base URL of the OpenAI-compatible endpoint "
                                      "before its key (the key is checked there)")
        else:
            result = self._checks.check_openai_key(key, url)
        if not result.success:
            raise _rejection(result, key)

    def delete_api_key(self, provider: str | None = None) -> ApiKeyStatus:
        """Removes the provider's stored key; the environment's key (if any) is used again."""
        provider = self.provider_of({"provider": provider})
        self._secrets.delete_api_key(provider)
        log.info("Stored API key for %s removed", provider)
        return self.api_key_status(provider)

    def base_url_of(self, provider: str) -> str | None:
        """The base URL `provider` uses (or would, once chosen); None: the official one."""
        values = self.values()
        if values.provider == provider:
            return values.base_url
        stored = store.app_stored(self._db.conn())
        parked = (stored.get("by_provider") or {}).get(provider) or {}
        return self._valid_parked(parked).get("base_url") or self._env_base_urls.get(provider)

    def env_base_url(self, provider: str) -> str | None:
        """The environment's base URL for `provider` (None: its official one)."""
        return self._env_base_urls.get(provider)

    def model_of(self, provider: str) -> str | None:
        """The model chats use with `provider` (when it is, or becomes, the current one)."""
        return self.remembered(provider).model

    def _valid_parked(self, parked: object) -> dict[str, Any]:
        """A parked provider's fields that still pass the checks."""
        given = {name: value for name, value in parked.items() if value is not None} \
            if isinstance(parked, dict) else {}
        return store.valid_fields(SettingsPatch, given, provider_settings.PER_PROVIDER)

    def _merge(self, stored: object) -> dict[str, Any]:
        """Defaults overlaid with the stored values that are still valid (the model default
        is the provider's)."""
        valid = self._valid_stored(stored)
        provider = str(valid.get("provider") or self._defaults["provider"])
        return {**self._defaults, "model": self._models.get(provider), **valid}

    def _valid_stored(self, stored: object) -> dict[str, Any]:
        """Only what was explicitly set and still passes the checks (defaults stay live)."""
        return store.valid_fields(SettingsPatch, stored, self.FIELDS)


def _secret_first(data: T) -> T:
    """A key that is not even text is refused with the key's own rule, never echoed."""
    if isinstance(data, dict) and not isinstance(data.get("api_key"), str):
        raise invalid("api_key", "is required and must be a string")
    return data


def _rename_default(conn: sqlite3.Connection, cleaned: dict[str, Any]) -> None:
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
    user_personas.update(conn, default.id, {"name": cleaned["user_name"]})


def _rejection(result: ApiResponse, key: str) -> ServiceError:
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
