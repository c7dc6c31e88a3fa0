"""Personas (DESIGN §7, §12): the card fields as a request body, checked the same way for a
POST, a PUT and an imported card, and the persona as the API answers it.

The limits are generous enough for the character cards people share (long descriptions, many
greetings, big lorebooks) and small enough that one persona cannot make a prompt or a page
unusable.
"""
import json
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, get_args

from pydantic import AfterValidator, BeforeValidator, Field

from .base import Body, omittable, rule_error
from .fields import MODEL_ID, ONE_LINE, Line, Text
from .ids import PERSONA_ID, shaped
from .resource import Resource
from .settings import Language

TEXT_LIMITS = {"name": 80, "description": 32000, "user_name": 80, "greeting": 16000,
               "personality": 16000, "scenario": 16000, "example_dialogue": 32000,
               "creator_notes": 16000, "system_prompt": 16000,
               "post_history_instructions": 16000}
MAX_GREETINGS, MAX_TAGS, TAG_LENGTH = 64, 64, 100
JSON_LIMITS = {"extensions": 256 * 1024, "card": 1024 * 1024}
MAX_DEPTH = 32
_LIMIT = TEXT_LIMITS
_ONE_LINE: Any = {"pattern": ONE_LINE}


def _depth(value: Any, level: int = 1) -> int:
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


def _json_within(limit: int) -> Callable[[dict], dict]:
    """A check: no deeper than MAX_DEPTH, no larger than `limit` bytes as JSON."""

    def check(value: dict) -> dict:
        if _depth(value) > MAX_DEPTH:
            raise rule_error(f"must not be nested deeper than {MAX_DEPTH} levels")
        try:
            size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        except (UnicodeEncodeError, ValueError):
            raise rule_error("must hold only valid Unicode text and finite numbers") from None
        if size > limit:
            raise rule_error(f"must not be larger than {limit} bytes as JSON")
        return value
    return check


Greeting = Annotated[Text, Field(max_length=TEXT_LIMITS["greeting"])]
Tag = Annotated[Line, Field(max_length=TAG_LENGTH, json_schema_extra=_ONE_LINE)]
Extensions = Annotated[dict[str, Any], AfterValidator(_json_within(JSON_LIMITS["extensions"]))]
Card = Annotated[dict[str, Any], AfterValidator(_json_within(JSON_LIMITS["card"]))]


class CardFields(Body):
    """The persona fields a card carries (a POST, a PUT, an import: the fields given)."""

    rules: ClassVar[dict[str, str]] = {
        "alternate_greetings": f"must be a list of at most {MAX_GREETINGS} strings of at most "
                               f"{TEXT_LIMITS['greeting']} characters",
        "tags": f"must be a list of at most {MAX_TAGS} single-line strings of at most "
                f"{TAG_LENGTH} characters",
        "extensions": "must be an object", "card": "must be an object"}
    name: Line = omittable(min_length=1, max_length=_LIMIT["name"], schema=_ONE_LINE)
    user_name: Line = omittable(max_length=_LIMIT["user_name"], schema=_ONE_LINE)
    description: Text = omittable(max_length=_LIMIT["description"])
    greeting: Text = omittable(max_length=_LIMIT["greeting"])
    personality: Text = omittable(max_length=_LIMIT["personality"])
    scenario: Text = omittable(max_length=_LIMIT["scenario"])
    example_dialogue: Text = omittable(max_length=_LIMIT["example_dialogue"])
    creator_notes: Text = omittable(max_length=_LIMIT["creator_notes"])
    system_prompt: Text = omittable(max_length=_LIMIT["system_prompt"])
    post_history_instructions: Text = omittable(max_length=_LIMIT["post_history_instructions"])
    alternate_greetings: list[Greeting] = omittable(
        max_length=MAX_GREETINGS, description="Offered as the opening line of a new chat.")
    tags: list[Tag] = omittable(max_length=MAX_TAGS)
    extensions: Extensions = omittable(description="A card's `extensions`, kept verbatim (at "
                                       f"most {JSON_LIMITS['extensions']} bytes as JSON).")
    card: Card = omittable(description="The card's other data (creator, character_version, "
                           "nickname, source, dates, character_book, …), kept verbatim (at "
                           f"most {JSON_LIMITS['card']} bytes as JSON).")
    use_card_prompts: bool = omittable(description="Send the card's `system_prompt` and "
                                       "`post_history_instructions` to the model (default "
                                       "true).")
    language: Language = omittable()


_READ_ONLY: Any = {"readOnly": True}


class PersonaPatch(CardFields):
    """PUT /api/personas/{pid}: only the fields given change; `id`, `created_at`,
    `updated_at` and `avatar_url` are accepted and ignored."""

    rules: ClassVar[dict[str, str]] = {
        **CardFields.rules, "model": "must look like a model id (letters, digits and . _ : / @ "
        "+ -, up to 200 characters)"}
    model: Annotated[str | None, BeforeValidator(lambda v: None if v == "" else v)] = omittable(
        pattern=MODEL_ID, description="This persona's model (an id of the current provider); "
        "null = the app setting's model. Used for chat and memory updates.")
    id: Any = omittable(schema=_READ_ONLY)
    created_at: Any = omittable(schema=_READ_ONLY)
    updated_at: Any = omittable(schema=_READ_ONLY)
    avatar_url: Any = omittable(schema=_READ_ONLY)


class PersonaCreate(PersonaPatch):
    """POST /api/personas: its cortex files come from the templates."""

    name: Line = Field(min_length=1, max_length=_LIMIT["name"], json_schema_extra=_ONE_LINE)


class Persona(Resource):
    """A persona (a character)."""

    id: str = Field(json_schema_extra=shaped(PERSONA_ID))
    name: str
    user_name: str
    language: Language
    description: str
    greeting: str
    personality: str
    scenario: str
    example_dialogue: str
    creator_notes: str
    system_prompt: str
    post_history_instructions: str
    alternate_greetings: list[str]
    tags: list[str]
    extensions: dict[str, Any]
    card: dict[str, Any]
    use_card_prompts: bool
    model: str | None
    avatar_url: str | None = Field(description="The avatar (versioned URL), or null.")
    created_at: str = Field(description="ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z")
    updated_at: str


class PersonaList(Resource):
    """All personas, the default one first."""

    personas: list[Persona]


def stand_in(persona_id: str, language: str | None = None) -> Persona:
    """A persona whose row is gone (deleted while a cortex run of it was under way): named by
    its id, every card field empty, in `language` (the app's; English when unsupported), so
    the run's prompt renders as it did from the `{"id", "name"}` dict this replaces."""
    kinds: dict[Any, Any] = {str: "", list[str]: [], dict[str, Any]: {}}
    empty = {name: kinds.get(field.annotation) for name, field in Persona.model_fields.items()}
    return Persona.model_validate({
        **empty, "id": persona_id, "name": persona_id, "use_card_prompts": True,
        "language": language if language in get_args(Language) else "en"})
