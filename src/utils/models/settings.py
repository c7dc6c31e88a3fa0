"""The settings: the app's (key "app"), the cortex's (key "cortex") and each persona's memory
settings, with their defaults and bounds in one place (`SettingsStore` reads and writes them).

A `*Patch` model is a PUT body: every field optional, unknown keys refused; the full model is
what a GET answers, defaults filled in.
"""
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .base import Body, omittable
from .fields import MODEL_ID, BaseUrl, Line
from .resource import Resource

Provider = Literal["anthropic", "openai_compatible"]
Effort = Literal["low", "medium", "high", "xhigh", "max"] | None
Language = Literal["en", "de"]
Frequency = Literal["frequent", "medium", "rare"]
ReviewMode = Literal["auto", "review"]
KEY = r"^[\x21-\x7e]{16,512}$"
WINDOW = (512, 10_000_000)
_PROVIDER_DOC = ("`anthropic` (Messages API) or `openai_compatible` (Chat Completions: Ollama, "
                 "llama.cpp, vLLM, LM Studio, OpenRouter, OpenAI). Default: `PERSONA_PROVIDER`, "
                 "else `anthropic`.")
_MODEL_RULE = ("must look like a model id (letters, digits and . _ : / @ + -, up to 200 "
               "characters)")
_WRITE_ONLY: dict[str, Any] = {"writeOnly": True}


class SettingsPatch(Body):
    """PUT /api/settings: a partial update; all fields valid or nothing is written. A saved key
    is sent only to the URL it was saved for: a new `base_url` for a provider with a key needs
    `api_key` too, else `409 key_bound_to_url`."""

    rules: ClassVar[dict[str, str]] = {
        "model": _MODEL_RULE, "provider": "must be one of anthropic, openai_compatible",
        "api_key": "must be 16 to 512 printable characters without spaces"}
    model: str = omittable(pattern=MODEL_ID, description="The model id of the current "
                       "provider (each provider keeps its own).")
    provider: Provider = omittable(description=_PROVIDER_DOC)
    base_url: BaseUrl = omittable(max_length=500, schema={"format": "uri"},
                              description="http(s) URL without credentials, e.g. "
                              "`http://127.0.0.1:11434/v1`. For `anthropic` it overrides "
                              "`ANTHROPIC_BASE_URL`; for `openai_compatible` the default is "
                              "`OPENAI_BASE_URL`.")
    context_window: int | None = omittable(ge=WINDOW[0], le=WINDOW[1], description="The "
                                       "endpoint's context window in tokens; null = the "
                                       "provider default (200000 / 8192). History is trimmed "
                                       "to fit, never the persona or memory.")
    effort: Effort = omittable()
    max_tokens: int = omittable(ge=1, le=64000)
    context_limit: int = omittable(ge=4, le=400,
                               description="Messages of both roles sent as history.")
    language: Language = omittable()
    user_name: Line = omittable(max_length=80)
    api_key: Line | None = omittable(pattern=KEY, schema=_WRITE_ONLY,
                                 description="The key for the `base_url` in the same request "
                                 "(checked there, then stored bound to it), or null to use "
                                 "that URL without a key.")


class AppSettings(Body):
    """The stored app settings over their defaults (`model` and `provider` default to the
    environment's, filled in by the settings service)."""

    model: str | None = None
    provider: Provider = "anthropic"
    base_url: str | None = None
    context_window: int | None = None
    effort: Effort = None
    max_tokens: int = 2048
    context_limit: int = 40
    language: Language = "en"
    user_name: str = ""


class MemoryRunSettings(BaseModel):
    """What the cortex reads of the "app" settings: the language of its templates and prompts,
    the person's name (the default user persona's), and the model of its runs (`cortex_model`,
    stored but not in the API, over the persona's and the chat `model`). Unset means the
    cortex's own fallback (the persona's language, a neutral name, the configured model)."""

    model_config = ConfigDict(frozen=True)
    language: Language | None = None
    user_name: str | None = None
    model: str | None = None
    cortex_model: str | None = None


class ApiKeyBody(Body):
    """PUT /api/settings/api-key: `provider` defaults to the current one; an OpenAI-compatible
    key is checked with `GET /models`.

    A key the API rejects: `400 invalid_api_key`. If the check itself fails (rate limit,
    overload, network): 503 or 502, nothing stored.
    """

    rules: ClassVar[dict[str, str]] = {
        "api_key": "must be 16 to 512 printable characters without spaces",
        "provider": "must be one of anthropic, openai_compatible"}
    api_key: Line = Field(pattern=KEY, json_schema_extra=_WRITE_ONLY)
    provider: Provider | None = None


class ConnectionTest(Body):
    """POST /api/settings/test-connection. Fields left out come from the settings. Without
    `api_key` the key that belongs to the URL probed is sent (none if none does); a `base_url`
    whose provider has a key saved for another URL needs `api_key` (null: probe without a
    key), else `409 key_bound_to_url`."""

    rules: ClassVar[dict[str, str]] = {
        "api_key": "must be a string of at most 512 characters, or null",
        "provider": "must be one of anthropic, openai_compatible", "model": _MODEL_RULE}
    provider: Provider | None = None
    base_url: BaseUrl = Field(None, max_length=500)
    api_key: str | None = Field(None, max_length=512, json_schema_extra=_WRITE_ONLY)
    model: Annotated[str | None, BeforeValidator(lambda v: v or None)] = Field(
        None, pattern=MODEL_ID, description="Empty or left out: the model chats would use.")


class _SettingsError(Body):
    """The cortex settings keep their own error shape: `invalid_setting`, whole sentences."""

    error_code: ClassVar[str] = "invalid_setting"
    message_format: ClassVar[str] = "{field} {rule}."


class CortexSettings(_SettingsError):
    """`GET/PUT /api/cortex/settings`: memory updates on or off, how often, and after how many
    idle minutes a quiet session is learned from."""

    unknown_format: ClassVar[str] = ("Unknown cortex setting {field!r:.42}; the settings are "
                                     "enabled, frequency and idle_minutes.")
    rules: ClassVar[dict[str, str]] = {
        "frequency": "must be one of frequent, medium, rare",
        "idle_minutes": "must be a whole number from 1 to 1440"}
    enabled: bool = True
    frequency: Frequency = "medium"
    idle_minutes: int = Field(30, ge=1, le=1440)


class PersonaMemorySettings(_SettingsError):
    """A persona's memory settings: review mode (`auto` changes the files, `review` makes a
    proposal) and the sleep schedule (consolidate after `sleep_sessions` new sessions once
    `sleep_hours` have passed)."""

    unknown_format: ClassVar[str] = ("Unknown setting {field!r:.42}; the settings are "
                                     "memory_review, sleep_enabled, sleep_sessions, sleep_hours.")
    rules: ClassVar[dict[str, str]] = {
        "memory_review": 'must be "auto" or "review"',
        "sleep_sessions": "must be a whole number from 1 to 1000",
        "sleep_hours": "must be a whole number from 1 to 8760"}
    memory_review: ReviewMode = "auto"
    sleep_enabled: bool = True
    sleep_sessions: int = Field(5, ge=1, le=1000)
    sleep_hours: int = Field(24, ge=1, le=8760)


class ApiKeyStatus(Resource):
    """The key's status: the key itself is never returned."""

    configured: bool
    last4: str | None = Field(min_length=4, max_length=4)
    source: Literal["settings", "environment"] | None


class ApiKeyAnswer(Resource):
    """The key's status."""

    api_key: ApiKeyStatus


class ProviderMemory(Resource):
    """A provider's own base URL, model, window and the status of the key that belongs to that
    URL (what it would use once chosen)."""

    base_url: str | None
    model: str | None
    context_window: int | None
    api_key: ApiKeyStatus


class Settings(Resource):
    """The settings, defaults filled in, with the current provider's key status."""

    model: str | None
    provider: Provider
    base_url: str | None
    context_window: int | None
    effort: Effort
    max_tokens: int
    context_limit: int
    language: Language
    user_name: str
    api_key: ApiKeyStatus
    is_ready: bool = Field(description="Chat can be used: a key is configured, or an "
                           "OpenAI-compatible base URL (local endpoints need no key).")
    providers: dict[Provider, ProviderMemory]


class Failure(Resource):
    """Why a probe or a listing failed (the answer is still 200)."""

    code: str
    message: str


class ModelList(Resource):
    """The ids the saved endpoint lists; a failed listing is still 200 with `error`."""

    provider: Provider
    models: list[str]
    error: Failure | None = None


class ToolSupport(Resource):
    """Whether a forced tool call came back (memory updates need the non-streaming one, or the
    JSON edit-plan fallback)."""

    non_streaming: bool
    streaming: bool


class ConnectionReport(Resource):
    """What was found; a failed probe is still 200 with `error`.

    The probe follows no redirect, reports our own error words (at most the far side's HTTP
    status) and ends within 10 s.
    """

    reachable: bool
    models: list[str]
    model: str | None = Field(None, description="The model tested: the one given, else the one "
                              "chats use, else the first listed.")
    tools: ToolSupport
    context_window: int | None = Field(description="When the endpoint reveals it (vLLM, "
                                       "llama.cpp, OpenRouter, LM Studio).")
    error: Failure | None = None


class Limit(Resource):
    """`min`/`max` for numbers, `min_length`/`max_length` for text, `max_items` for lists."""

    min: int | None = None
    max: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    max_items: int | None = None


class Limits(Resource):
    """Per form, per field: the limits the server checks (one source: the models' Fields)."""

    persona: dict[str, Limit]
    settings: dict[str, Limit]
    cortex_settings: dict[str, Limit]
    session: dict[str, Limit]
    message: dict[str, Limit]
    search: dict[str, Limit]
    user_persona: dict[str, Limit]
    world: dict[str, Limit] = Field(description="Also `keys` (per list) and `entries` (per book) "
                                    "as `max_items`.")


class SignIn(Resource):
    """POST /signin: the access token (JSON, or the page's form post with `next`)."""

    token: str = Field(json_schema_extra=_WRITE_ONLY)
    next: str | None = Field(None, description="Form posts: where to go next.")


class SignedIn(Resource):
    """Signed in (or out, for JSON requests)."""

    signed_in: bool
