"""One settings store: the app, cortex and per-persona memory settings, read over their
defaults (models/settings.py) and written after validation.

A stored value that no longer passes its field's check (an older version, a hand edit) is
ignored field by field, so the default applies again instead of a broken value.
"""
import logging
import sqlite3
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..models import Body, Invalid, parse
from ..models.settings import (
    AppSettings,
    CortexSettings,
    MemoryRunSettings,
    PersonaMemorySettings,
    SettingsPatch,
)
from .db import transaction
from .generations import ConfigCache
from .persona_settings import write_persona_settings
from .settings import (
    decode_setting,
    get_setting_text,
    get_setting_texts,
    set_setting,
)

log = logging.getLogger(__name__)
APP, CORTEX = "app", "cortex"
APP_FIELDS = tuple(AppSettings.model_fields)
_APP_AND_CORTEX = ("settings", APP, CORTEX)  # their key in a `ConfigCache`


def valid_fields(model: type[Body], stored: Any,
                 names: Iterable[str] | None = None) -> dict[str, Any]:
    """The entries of `stored` (a dict read back) that still pass `model`'s check."""
    valid: dict[str, Any] = {}
    if not isinstance(stored, dict):
        return valid
    for name in names or model.model_fields:
        if name in stored:
            try:
                valid[name] = getattr(parse(model, {name: stored[name]}), name)
            except Invalid:
                log.warning("Ignoring invalid stored setting %s", name)
    return valid


def app_stored(conn: sqlite3.Connection) -> dict[str, Any]:
    """The raw "app" settings as stored (only what was set; `by_provider` included)."""
    return app_of(get_setting_text(conn, APP))


def app_text(conn: sqlite3.Connection) -> str | None:
    """The "app" row's stored text as it is (`app_of` decodes it): a cheap key for what is
    derived from it."""
    return get_setting_text(conn, APP)


def app_of(text: str | None) -> dict[str, Any]:
    """The raw "app" settings a stored text holds (a new dict: the caller may change it)."""
    stored = decode_setting(text) if text is not None else {}
    return stored if isinstance(stored, dict) else {}


def app_and_cortex(conn: sqlite3.Connection) -> tuple[str | None, CortexSettings]:
    """The "app" row's text (`app_text`) and the cortex settings (as `cortex_settings`) in one
    read: a chat turn's prompt and the cortex trigger after it each need both."""
    texts = get_setting_texts(conn, (APP, CORTEX))
    return texts.get(APP), _cortex_of(texts.get(CORTEX)).model_copy()


def app_and_cortex_kept(conn: sqlite3.Connection, cache: ConfigCache,
                       generation: int) -> tuple[str | None, CortexSettings]:
    """`app_and_cortex` as kept in `cache` under the `config` counter `generation` (read
    before this call, `generations.py`): a turn's prompt and the trigger after it share it.
    The settings object is shared: read it, do not change it."""
    return cache.get(generation, _APP_AND_CORTEX, lambda: app_and_cortex(conn))


def app_valid(conn: sqlite3.Connection) -> dict[str, Any]:
    """The app settings that were set and still pass their checks (defaults stay live)."""
    return valid_fields(SettingsPatch, app_stored(conn), APP_FIELDS)


def memory_run_settings(conn: sqlite3.Connection,
                        user_name: str | None = None) -> MemoryRunSettings:
    """What the cortex reads of the "app" settings (checked as the API checks them), with
    `user_name` (the default user persona's) over a stored one; `cortex_model` is kept only
    as a non-empty string."""
    stored = app_stored(conn)
    valid = valid_fields(SettingsPatch, stored, ("language", "user_name", "model"))
    cortex_model = stored.get("cortex_model")
    return MemoryRunSettings(
        language=valid.get("language"), model=valid.get("model"),
        user_name=user_name if user_name is not None else valid.get("user_name"),
        cortex_model=(cortex_model.strip() or None) if isinstance(cortex_model, str) else None)


@lru_cache(maxsize=8)
def context_limit_of(text: str | None) -> int:
    """The context limit an "app" text holds (`app_text`, `app_and_cortex`): the stored value
    if it still passes its check, else `AppSettings`' default (checked once per text)."""
    valid = valid_fields(SettingsPatch, app_of(text), ("context_limit",))
    limit: int = valid.get("context_limit", AppSettings.model_fields["context_limit"].default)
    return limit


def save_app(conn: sqlite3.Connection, stored: dict[str, Any]) -> None:
    """Stores the raw "app" settings (the caller validated them)."""
    set_setting(conn, APP, stored)


def cortex_settings(conn: sqlite3.Connection) -> CortexSettings:
    """The cortex settings over their defaults (a copy of the validated settings of the
    stored text)."""
    return _cortex_of(get_setting_text(conn, CORTEX)).model_copy()


@lru_cache(maxsize=8)
def _cortex_of(text: str | None) -> CortexSettings:
    """The settings a stored text holds: the row is read every time (another process may
    have written it), the validation only for a text not seen lately."""
    return CortexSettings(**valid_fields(CortexSettings, {} if text is None
                                         else decode_setting(text)))


def save_cortex_settings(conn: sqlite3.Connection, changes: Any) -> CortexSettings:
    """Validates `changes` (any subset of the fields), stores the merged settings."""
    given = parse(CortexSettings, changes).given()
    merged = cortex_settings(conn).model_copy(update=given)
    set_setting(conn, CORTEX, merged.model_dump())
    return merged


def persona_settings(conn: sqlite3.Connection, persona_id: str) -> PersonaMemorySettings:
    """The persona's memory settings over the defaults."""
    row = conn.execute("SELECT memory_review, sleep_enabled, sleep_sessions, sleep_hours "
                       "FROM cortex_persona_settings WHERE persona_id = ?",
                       (persona_id,)).fetchone()
    stored = {} if row is None else {**dict(row), "sleep_enabled": bool(row["sleep_enabled"])}
    return PersonaMemorySettings(**valid_fields(PersonaMemorySettings, stored))


def save_persona_settings(conn: sqlite3.Connection, persona_id: str,
                          changes: Any) -> PersonaMemorySettings:
    """Validates `changes` (any subset), stores the merged settings and returns them."""
    given = parse(PersonaMemorySettings, changes).given()
    with transaction(conn):
        settings = persona_settings(conn, persona_id).model_copy(update=given)
        write_persona_settings(conn, persona_id, settings.model_dump())
    return settings
