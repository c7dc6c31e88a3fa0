"""Checks for persona fields beyond the basics: the character-card ones (DESIGN §12).

The limits are generous enough for the character cards people actually share (long
descriptions, many greetings, big lorebooks) and small enough that one persona cannot make a
prompt or a page unusable. They are stated in docs and in the OpenAPI document. The rules themselves are the model
`models.personas.CardFields`; this module applies them to a card or a request body.
"""
from typing import Any

from ..models import Invalid, parse
from ..models.personas import (
    JSON_LIMITS,
    MAX_DEPTH,
    MAX_GREETINGS,
    MAX_TAGS,
    TAG_LENGTH,
    TEXT_LIMITS,
    CardFields,
)
from .errors import ServiceError, invalid

__all__ = ["JSON_LIMITS", "MAX_DEPTH", "MAX_GREETINGS", "MAX_TAGS", "TAG_LENGTH", "TEXT_LIMITS"]
CARD_FIELDS = tuple(name for name in CardFields.model_fields if name != "language")


def encodable(field: str, value: str) -> str:
    """`value` if it can be stored as UTF-8 (a lone surrogate cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(field, "must be valid Unicode text (no lone surrogates)") from None
    return value


def validate(data: dict) -> dict[str, Any]:
    """The card fields present in `data` (other keys are not looked at), checked; a bad one
    is a 400 naming it."""
    try:
        return parse(CardFields, {k: v for k, v in data.items() if k in CARD_FIELDS}).given()
    except Invalid as err:
        raise ServiceError(400, err.code, err.message, field=err.field) from None
