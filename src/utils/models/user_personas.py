"""User personas, "About you" (docs/about-you.md): request bodies and the resource."""
from pydantic import Field

from .base import Body, omittable
from .fields import Line, Text
from .resource import Resource

NAME_MAX, DESCRIPTION_MAX = 80, 8000
_NAME = "One line; `{{user}}` in prompts and cards."
_DESCRIPTION = "Who the person is; goes into the chat and memory prompts."


class UserPersonaPatch(Body):
    """PATCH /api/user-personas/{upid}: the fields given change."""

    name: Line = omittable(min_length=1, max_length=NAME_MAX, description=_NAME)
    description: Text = omittable(max_length=DESCRIPTION_MAX, description=_DESCRIPTION)


class UserPersonaCreate(UserPersonaPatch):
    """POST /api/user-personas: the first one becomes the default; `is_default: true` makes a
    later one the default."""

    name: Line = Field(min_length=1, max_length=NAME_MAX, description=_NAME)
    is_default: bool = False


class DefaultChoice(Body):
    """PUT /api/user-personas/default: the user persona that becomes the default."""

    id: int = Field(ge=1, le=2**63 - 1)


class UserPersona(Resource):
    """A user persona."""

    id: int = Field(ge=1)
    name: str
    description: str
    is_default: bool
    avatar_url: str | None
    created_at: str = Field(description="ISO-8601 UTC, e.g. 2025-01-31T12:00:00.123Z")
    updated_at: str


class UserPersonaList(Resource):
    """Every user persona, the default first, and the default's id."""

    user_personas: list[UserPersona]
    default_id: int | None
