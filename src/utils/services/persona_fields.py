"""Checks for persona fields beyond the basics: the character-card ones (DESIGN §12).

The limits are generous enough for the character cards people actually share (long
descriptions, many greetings, big lorebooks) and small enough that one persona cannot make a
prompt or a page unusable. They are stated in docs and in the OpenAPI document.
"""
import json
from typing import Any

from ..limits import PERSONA_TEXT
from . import validation as check
from .errors import invalid

TEXT_LIMITS = PERSONA_TEXT  # one source: src/utils/limits.py
SINGLE_LINE = ("name", "user_name")
MAX_GREETINGS = 64
MAX_TAGS = 64
TAG_LENGTH = 100
JSON_LIMITS = {"extensions": 256 * 1024, "card": 1024 * 1024}
MAX_DEPTH = 32
CARD_FIELDS = (*TEXT_LIMITS, "alternate_greetings", "tags", "extensions", "card",
               "use_card_prompts")


def text(field: str, value) -> str:
    """One of the text fields, within its limit and encodable (no lone surrogates)."""
    value = check.text(field, value, max_len=TEXT_LIMITS[field],
                       min_len=1 if field == "name" else 0,
                       single_line=field in SINGLE_LINE)
    return encodable(field, value)


def encodable(field: str, value: str) -> str:
    """`value` if it can be stored as UTF-8 (a lone surrogate cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(field, "must be valid Unicode text (no lone surrogates)") from None
    return value


def string_list(field: str, value, *, max_items: int, max_len: int,
                single_line: bool = False) -> list[str]:
    """A list of at most `max_items` strings, each within `max_len`."""
    if not isinstance(value, list):
        raise invalid(field, "must be a list of strings")
    if len(value) > max_items:
        raise invalid(field, f"must not have more than {max_items} entries")
    items = []
    for item in value:
        item = check.text(field, item, max_len=max_len, single_line=single_line)
        items.append(encodable(field, item))
    return items


def json_object(field: str, value) -> dict:
    """A JSON object no larger than its limit and no deeper than MAX_DEPTH, kept verbatim."""
    if not isinstance(value, dict):
        raise invalid(field, "must be an object")
    if _depth(value) > MAX_DEPTH:
        raise invalid(field, f"must not be nested deeper than {MAX_DEPTH} levels")
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except (UnicodeEncodeError, ValueError):
        raise invalid(field, "must hold only valid Unicode text and finite numbers") from None
    if size > JSON_LIMITS[field]:
        raise invalid(field, f"must not be larger than {JSON_LIMITS[field]} bytes as JSON")
    return value


def validate(data: dict) -> dict:
    """The card-related fields present in `data`, checked."""
    fields: dict[str, Any] = {}
    for field in TEXT_LIMITS:
        if field in data:
            fields[field] = text(field, data[field])
    if "alternate_greetings" in data:
        fields["alternate_greetings"] = string_list(
            "alternate_greetings", data["alternate_greetings"], max_items=MAX_GREETINGS,
            max_len=TEXT_LIMITS["greeting"])
    if "tags" in data:
        fields["tags"] = string_list("tags", data["tags"], max_items=MAX_TAGS,
                                     max_len=TAG_LENGTH, single_line=True)
    for field in JSON_LIMITS:
        if field in data:
            fields[field] = json_object(field, data[field])
    if "use_card_prompts" in data:
        if not isinstance(data["use_card_prompts"], bool):
            raise invalid("use_card_prompts", "must be true or false")
        fields["use_card_prompts"] = data["use_card_prompts"]
    return fields


def _depth(value, level: int = 1) -> int:
    """Nesting depth without recursion (so a hostile document cannot exhaust the stack)."""
    deepest, stack = 0, [(value, level)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        children = item.values() if isinstance(item, dict) else item \
            if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return deepest
