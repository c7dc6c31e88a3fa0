"""Personas, sessions and the last message of a session (DESIGN §7)."""
from typing import Any

from ..models.conversations import BranchChoice, MessageEdit, SessionCreate, SessionPatch
from ..models.sessions import (
    Deleted,
    DeletedExchange,
    EditedPage,
    MessageDetail,
    Session,
    SessionList,
    SessionPage,
    SwitchedBranch,
)
from ..services.persona_fields import JSON_LIMITS, MAX_GREETINGS, MAX_TAGS, TAG_LENGTH, TEXT_LIMITS
from .common import (
    PERSONA_ID,
    PERSONA_PARAM,
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    obj,
    operation,
    ref,
)
from .table import Op, table_paths

_LANGUAGE = {"type": "string", "enum": ["en", "de"]}
_ONE_LINE = "^[^\r\n\u2028\u2029]*$"
_PERSONA_FIELDS: dict[str, dict[str, Any]] = {
    "name": {"type": "string", "minLength": 1, "maxLength": 80, "pattern": _ONE_LINE},
    "user_name": {"type": "string", "maxLength": 80, "pattern": _ONE_LINE},
    "language": _LANGUAGE,
    **{name: {"type": "string", "maxLength": limit} for name, limit in TEXT_LIMITS.items()
       if name not in ("name", "user_name")},
    "alternate_greetings": {"type": "array", "maxItems": MAX_GREETINGS,
                            "items": {"type": "string", "maxLength": TEXT_LIMITS["greeting"]},
                            "description": "Offered as the opening line of a new chat."},
    "tags": {"type": "array", "maxItems": MAX_TAGS,
             "items": {"type": "string", "maxLength": TAG_LENGTH, "pattern": _ONE_LINE}},
    "extensions": {"type": "object", "description": "A card's `extensions`, kept verbatim "
                   f"(at most {JSON_LIMITS['extensions']} bytes as JSON)."},
    "card": {"type": "object", "description": "The card's other data (creator, "
             "character_version, nickname, source, dates, character_book, …), kept verbatim "
             f"(at most {JSON_LIMITS['card']} bytes as JSON)."},
    "use_card_prompts": {"type": "boolean", "description": "Send the card's `system_prompt` and"
                         " `post_history_instructions` to the model (default true)."},
    "model": {"type": ["string", "null"], "pattern": "^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$",
              "description": "This persona's model (an id of the current provider); null = "
                             "the app setting's model. Used for chat and memory updates."},
}
_READ_ONLY = {"id": {"type": "string", "readOnly": True},
              "created_at": {"type": "string", "readOnly": True},
              "updated_at": {"type": "string", "readOnly": True},
              "avatar_url": {"readOnly": True}}
_PERSONA_OUT = {name: {k: v for k, v in schema.items() if k in ("type", "items")}
                for name, schema in _PERSONA_FIELDS.items()}
_GREETING_INDEX = {"type": "integer", "minimum": 0, "description": "The greeting that opens the "
                   "session: 0 is `greeting`, n is `alternate_greetings[n-1]`."}
MESSAGE_TEXT = {"type": "string", "minLength": 1, "maxLength": 32000, "pattern": r"\S"}

SCHEMAS = {
    "Persona": obj({
        "id": {"type": "string", "pattern": PERSONA_ID},
        **_PERSONA_OUT, "language": _LANGUAGE,
        "avatar_url": {"anyOf": [{"type": "string"}, {"type": "null"}],
                       "description": "The avatar (versioned URL), or null."},
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
    }, required=("id", *_PERSONA_FIELDS, "avatar_url", "created_at", "updated_at")),
    "PersonaCreate": obj({**_PERSONA_FIELDS, **_READ_ONLY}, required=("name",), additional=False,
                         description="`id`, `created_at`, `updated_at` are accepted and ignored."),
    "PersonaUpdate": obj({**_PERSONA_FIELDS, **_READ_ONLY}, additional=False,
                         description="Only the fields given change."),
}


def _personas() -> dict:
    persona = json_response("The persona.", ref("Persona"))
    return {
        "/api/personas": {
            "get": operation("listPersonas", "personas", "All personas, the default one first.", {
                "200": json_response("The personas.", obj(
                    {"personas": {"type": "array", "items": ref("Persona")}},
                    required=("personas",)))}),
            "post": operation("createPersona", "personas",
                              "Create a persona (its cortex files come from the templates).", {
                                  "201": json_response("The new persona.", ref("Persona")),
                                  **errors("400")},
                              write=True, requestBody=json_body(ref("PersonaCreate"))),
        },
        "/api/personas/{pid}": {
            "parameters": [PERSONA_PARAM],
            "get": operation("getPersona", "personas", "One persona.",
                             {"200": persona, **errors("404")}),
            "put": operation("updatePersona", "personas", "Change the fields given.",
                             {"200": persona, **errors("400", "404")}, write=True,
                             requestBody=json_body(ref("PersonaUpdate"))),
            "delete": operation(
                "deletePersona", "personas",
                "Delete a persona with its sessions, messages, cortex files and revisions.",
                {"200": json_response("Deleted.", ref("Deleted")),
                 **errors("400", "404", "409")}, write=True,
                description="The default persona cannot be deleted (`409 default_persona`). "
                            "The request has no body (or a JSON one)."),
        },
    }


_PAGE = ({"name": "before", "in": "query", "required": False,
          "schema": {"type": "integer", "minimum": 1},
          "description": "Only messages with a smaller id (the smallest id you have)."},
         {"name": "limit", "in": "query", "required": False,
          "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
          "description": "Messages per page."})
_PERSONA = ({"name": "persona_id", "in": "query", "required": True,
             "schema": {"type": "string", "minLength": 1}},)
_ONE, _LAST = "/api/sessions/{sid}", "/api/sessions/{sid}/messages/last"
_BUSY = "`409 session_busy` while a reply streams in the session."
SESSIONS = (
    Op("get", "/api/sessions", "One persona's sessions, most recently active first.",
       SessionList, errors="400 404", query=_PERSONA),
    Op("post", "/api/sessions", "Start a session with a persona.", Session, SessionCreate,
       "400 404", "201"),
    Op("get", _ONE, "The session with one page of its active branch (oldest first).",
       SessionPage, errors="400 404", query=_PAGE),
    Op("patch", _ONE, "Rename the session, pick its greeting (before the first message) or "
       "its user persona.", Session, SessionPatch, "400 404 409"),
    Op("delete", _ONE, "Delete the session and its messages.", Deleted, errors="400 404"),
)
MESSAGES = (
    Op("put", _LAST, "Edit the active branch's last user message: a new sibling and branch "
       "(the old one is kept); then regenerate for its reply.", EditedPage, MessageEdit,
       "400 404 409"),
    Op("delete", _LAST, "Delete the last exchange (the active branch's last user message and "
       "everything below it, alternatives included).", DeletedExchange, errors="400 404 409"),
    Op("patch", "/api/messages/{mid}", "Edit any message as a new sibling (a new branch).",
       EditedPage, MessageEdit, "400 404 409", description="A person's message gets a sibling "
       "that ends the active branch; ask for its reply with `regenerate`. A reply gets a "
       "sibling marked `edited`. The originals stay as alternatives. " + _BUSY),
    Op("get", "/api/sessions/{sid}/messages/{mid}", "One message with its memory provenance.",
       MessageDetail, errors="400 404"),
    Op("put", "/api/sessions/{sid}/active", "Make the branch through a message (its newest "
       "leaf) the active one.", SwitchedBranch, BranchChoice, "400 404 409"),
)


def paths() -> dict:
    """The persona, session and message paths."""
    return {**_personas(), **table_paths("sessions", SESSIONS),
            **table_paths("messages", MESSAGES)}

