"""Personas, sessions and the last message of a session (DESIGN §7)."""
from typing import Any

from ..models.conversations import BranchChoice, MessageEdit, SessionCreate, SessionPatch
from ..services.persona_fields import JSON_LIMITS, MAX_GREETINGS, MAX_TAGS, TAG_LENGTH, TEXT_LIMITS
from .common import (
    PERSONA_ID,
    PERSONA_PARAM,
    SESSION_ID,
    SESSION_PARAM,
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    path_param,
    ref,
)
from .table import model_ref

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
    "Session": obj({
        "id": {"type": "string", "pattern": SESSION_ID},
        "persona_id": {"type": "string", "pattern": PERSONA_ID},
        "title": {"type": "string"}, "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
        "message_count": {"type": "integer", "minimum": 0,
                          "description": "Messages on the active branch."},
        "active_leaf_id": nullable({"type": "integer", "minimum": 1,
                                    "description": "The last message of the active branch."}),
        "greeting_index": _GREETING_INDEX,
        "user_persona_id": nullable({"type": "integer", "minimum": 1, "description":
                                     "The user persona the conversation uses (\"About you\");"
                                     " null: it follows the default (docs/about-you.md)."}),
        "imported": {"type": "boolean", "description": "Made by a chat import: it opens with its "
                     "own first message, without the persona's greeting."},
    }, required=("id", "persona_id", "title", "greeting_index", "created_at", "updated_at",
                 "message_count")),
    "Message": obj({
        "id": {"type": "integer", "minimum": 1},
        "session_id": {"type": "string", "pattern": SESSION_ID},
        "persona_id": {"type": "string", "pattern": PERSONA_ID},
        "role": {"type": "string", "enum": ["user", "assistant"]},
        "content": {"type": "string"},
        "status": {"type": "string", "enum": ["complete", "incomplete", "streaming"],
                   "description": "`streaming` while the reply is generated (its `content` is "
                                  "the text so far: follow it with `resume`); `incomplete` "
                                  "when stopped, cut off, interrupted or failed."},
        "created_at": TIMESTAMP,
        "parent_id": nullable({"type": "integer", "minimum": 1,
                               "description": "The message this one answers or follows; null "
                                              "for the first."}),
        "siblings": {"type": "array", "items": {"type": "integer"},
                     "description": "Ids of the alternatives at this position (same parent), "
                                    "oldest first, this one included: draw `< 2/3 >` from it."},
        "edited": {"type": "boolean", "description": "A reply the person edited."},
        "stop_reason": nullable({"type": "string", "description": "How a reply ended: "
                                 "`end_turn`, `max_tokens`, `cancelled` (stopped), "
                                 "`interrupted` (the server stopped while it was written)."}),
        "error": nullable(obj({"code": {"type": "string"}, "message": {"type": "string"},
                               "retryable": {"type": "boolean"}},
                              required=("code", "message", "retryable"),
                              description="Why a reply failed; shown with Retry.")),
        "cortex_revisions": nullable({
            "type": "object", "additionalProperties": {"type": "integer"},
            "description": "Replies only: the cortex revision of each file that was in the "
                           "reply's prompt (`{\"memory.md\": 12, \"soul.md\": 4, …}`); null "
                           "when the cortex was off."}),
        "world_info": nullable({
            "type": "array", "items": ref("FiredEntry"),
            "description": "Replies only: the world info entries that were in the reply's "
                           "prompt, in prompt order (docs/world-info.md); null when none fired."}),
    }, required=("id", "session_id", "persona_id", "role", "content", "status", "created_at")),
    "MessageDetail": {"allOf": [{"$ref": "#/components/schemas/Message"}, obj({
        "memory": {"type": "array", "description": "Cortex revisions anchored to this message: "
                   "`derived` (memory learned from it) or `retracted` (a reconciliation removed "
                   "what came from it).", "items": obj({
                       "filename": {"type": "string"}, "rev": {"type": "integer"},
                       "kind": {"type": "string", "enum": ["derived", "retracted"]},
                       "author": {"type": "string"}},
                       required=("filename", "rev", "kind", "author"))},
        "on_branch": {"type": "boolean", "description": "On the session's active branch."},
    }, required=("memory", "on_branch"))]},
    "SessionPage": {"allOf": [ref("Session"), obj({
        "messages": {"type": "array", "items": ref("Message"),
                     "description": "One page, oldest first."},
        "has_more": {"type": "boolean", "description": "Older messages exist."},
    }, required=("messages", "has_more"))]},
    "Deleted": obj({"id": {"type": "string"}, "deleted": {"const": True}},
                   required=("id", "deleted")),
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


def _sessions() -> dict:
    page = json_response("The session with one page of messages.", ref("SessionPage"))
    limit = {"name": "limit", "in": "query", "required": False,
             "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
             "description": "Messages per page."}
    before = {"name": "before", "in": "query", "required": False,
              "schema": {"type": "integer", "minimum": 1},
              "description": "Only messages with a smaller id (the smallest id you have)."}
    return {
        "/api/sessions": {
            "get": operation(
                "listSessions", "sessions", "One persona's sessions, most recently active first.",
                {"200": json_response("The sessions.", obj(
                    {"sessions": {"type": "array", "items": ref("Session")}},
                    required=("sessions",))), **errors("400", "404")},
                parameters=[{"name": "persona_id", "in": "query", "required": True,
                             "schema": {"type": "string", "minLength": 1}}]),
            "post": operation(
                "createSession", "sessions", "Start a session with a persona.",
                {"201": json_response("The new, untitled session.", ref("Session")),
                 **errors("400", "404")}, write=True,
                requestBody=json_body(model_ref(SessionCreate, "validation"))),
        },
        "/api/sessions/{sid}": {
            "parameters": [SESSION_PARAM],
            "get": operation("getSession", "sessions",
                             "The session with one page of its active branch (oldest first).",
                             {"200": page, **errors("400", "404")}, parameters=[before, limit]),
            "patch": operation(
                "renameSession", "sessions",
                "Rename the session, pick its greeting (before the first message) or its user "
                "persona.",
                {"200": json_response("The changed session.", ref("Session")),
                 **errors("400", "404", "409")}, write=True,
                description="`{title}` renames; `{greeting_index}` alone picks the greeting "
                            "(`409 conversation_started` once the session has messages); "
                            "`{user_persona_id}` alone picks who the person is in it (null: "
                            "the default).",
                requestBody=json_body(model_ref(SessionPatch, "validation"))),
            "delete": operation("deleteSession", "sessions", "Delete the session and its messages.",
                                {"200": json_response("Deleted.", ref("Deleted")),
                                 **errors("400", "404")}, write=True),
        },
        "/api/sessions/{sid}/messages/last": {
            "parameters": [SESSION_PARAM],
            "put": operation(
                "editLastMessage", "messages",
                "Edit the active branch's last user message: a new sibling and branch (the old "
                "one is kept); then regenerate for its reply.",
                {"200": json_response("The session page plus the edited `message`.", {
                    "allOf": [ref("SessionPage"), obj({"message": ref("Message")},
                                                      required=("message",))]}),
                 **errors("400", "404", "409")}, write=True,
                requestBody=json_body(model_ref(MessageEdit, "validation"))),
            "delete": operation(
                "deleteLastExchange", "messages",
                "Delete the last exchange (the active branch's last user message and "
                "everything below it, alternatives included).",
                {"200": json_response("The session page plus the `deleted_ids`.", {
                    "allOf": [ref("SessionPage"), obj(
                        {"deleted_ids": {"type": "array", "items": {"type": "integer"}}},
                        required=("deleted_ids",))]}),
                 **errors("400", "404", "409")}, write=True),
        },
    }


def _tree() -> dict:
    mid = path_param("mid", {"type": "integer", "minimum": 1}, "A message id.")
    page = {"allOf": [ref("SessionPage"), obj({"message": ref("Message")},
                                              required=("message",))]}
    return {
        "/api/messages/{mid}": {
            "parameters": [mid],
            "patch": operation(
                "editMessage", "messages", "Edit any message as a new sibling (a new branch).",
                {"200": json_response("The session's new active branch plus the new `message`.",
                                      page), **errors("400", "404", "409")}, write=True,
                description="A person's message gets a sibling with the new text that ends the "
                            "active branch; ask for its reply with the `regenerate` frame (or "
                            "`POST /api/sessions/{sid}/regenerate`). A reply gets a sibling "
                            "marked `edited`. The originals stay as alternatives. `409 "
                            "session_busy` while a reply streams in the session.",
                requestBody=json_body(model_ref(MessageEdit, "validation"))),
        },
        "/api/sessions/{sid}/messages/{mid}": {
            "parameters": [SESSION_PARAM, mid],
            "get": operation(
                "getMessage", "messages", "One message with its memory provenance.",
                {"200": json_response("The message, the cortex revisions it was answered with "
                                      "(`cortex_revisions`, replies) and the revisions anchored "
                                      "to it (`memory`).", ref("MessageDetail")),
                 **errors("400", "404")}),
        },
        "/api/sessions/{sid}/active": {
            "parameters": [SESSION_PARAM],
            "put": operation(
                "switchBranch", "messages",
                "Make the branch through a message (its newest leaf) the active one.",
                {"200": json_response("The session page of the new branch plus its "
                                      "`active_leaf_id`.", {"allOf": [ref("SessionPage"), obj(
                                          {"active_leaf_id": {"type": "integer"}},
                                          required=("active_leaf_id",))]}),
                 **errors("400", "404", "409")}, write=True,
                requestBody=json_body(model_ref(BranchChoice, "validation"))),
        },
    }


def paths() -> dict:
    """The persona, session and message paths."""
    return {**_personas(), **_sessions(), **_tree()}

