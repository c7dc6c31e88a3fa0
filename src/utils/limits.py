"""Input limits, the one source of truth: services validate with them, the OpenAPI document
describes them, and `GET /api/limits` serves them so the browser's form limits are the same.

Every form's limits come from its model's Field constraints (models/); the constants below
name them for the services and tests that count with them (chat import has no form: its file
limits are its own).
"""
from pydantic import BaseModel

from .models.base import bounds_of
from .models.conversations import MESSAGE_MAX, TITLE_MAX, MessageEdit, SessionPatch
from .models.personas import TEXT_LIMITS, CardFields
from .models.search import SEARCH_QUERY as SEARCH_MAX, SearchQuery
from .models.settings import CortexSettings, SettingsPatch
from .models.user_personas import UserPersonaPatch
from .models.world import ENTRIES_MAX, KEY_MAX, KEYS_MAX, BookPatch, EntryPatch

SESSION_TITLE = TITLE_MAX
MESSAGE = MESSAGE_MAX
SEARCH_QUERY = SEARCH_MAX
USER_PERSONAS = 200
MESSAGE_PAGE = {"default": 50, "max": 200}  # messages per page of a session's history
WORLD_LISTS = {"keys": KEYS_MAX, "entries": ENTRIES_MAX}
PERSONA_TEXT = TEXT_LIMITS
CHAT_IMPORT = {"line_bytes": 1024 * 1024, "lines": 50_001, "messages": 50_000, "swipes": 100,
               "message_chars": 100_000, "name_chars": 200}


def _length(limit: int, min_length: int = 0) -> dict:
    return {"min_length": min_length, "max_length": limit}


def _range(low: int, high: int) -> dict:
    return {"min": low, "max": high}


def model_limits(model: type[BaseModel], *names: str) -> dict:
    """`{field: {min, max} | {min_length, max_length}}` from the model's Field constraints."""
    found = {}
    for name in names:
        bounds = bounds_of(model.model_fields[name])
        found[name] = (_range(bounds["ge"], bounds["le"]) if "ge" in bounds
                       else _length(bounds["max_length"], bounds.get("min_length", 0)))
    return found


def as_document() -> dict:
    """The limits as `GET /api/limits` serves them: per form, per field."""
    return {
        "persona": model_limits(CardFields, *TEXT_LIMITS),
        "settings": model_limits(SettingsPatch, "max_tokens", "context_limit", "user_name"),
        "cortex_settings": model_limits(CortexSettings, "idle_minutes"),
        "session": model_limits(SessionPatch, "title"),
        "message": model_limits(MessageEdit, "content"),
        "search": model_limits(SearchQuery, "q"),
        "user_persona": model_limits(UserPersonaPatch, "name", "description"),
        "world": {**model_limits(BookPatch, "name", "description"),
                  **model_limits(EntryPatch, "comment", "content"), "key": _length(KEY_MAX),
                  **model_limits(BookPatch, "scan_depth", "token_budget"),
                  **model_limits(EntryPatch, "insertion_order"),
                  **{name: {"max_items": most} for name, most in WORLD_LISTS.items()}},
    }
