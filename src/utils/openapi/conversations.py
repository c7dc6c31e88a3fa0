"""Personas, sessions and the last message of a session (DESIGN §7)."""

from ..models.conversations import BranchChoice, MessageEdit, SessionCreate, SessionPatch
from ..models.personas import Persona, PersonaCreate, PersonaList, PersonaPatch
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
from .table import Op, table_paths

_PERSONA = "/api/personas/{pid}"
PERSONAS = (
    Op("get", "/api/personas", "All personas, the default one first.", PersonaList),
    Op("post", "/api/personas", "Create a persona (its cortex files come from the templates).",
       Persona, PersonaCreate, "400", "201"),
    Op("get", _PERSONA, "One persona.", Persona, errors="404"),
    Op("put", _PERSONA, "Change the fields given.", Persona, PersonaPatch, "400 404"),
    Op("delete", _PERSONA, "Delete a persona with its sessions, messages, cortex files and "
       "revisions.", Deleted, errors="400 404 409", description="The default persona cannot "
       "be deleted (`409 default_persona`). The request has no body (or a JSON one)."),
)
_PAGE = ({"name": "before", "in": "query", "required": False,
          "schema": {"type": "integer", "minimum": 1},
          "description": "Only messages with a smaller id (the smallest id you have)."},
         {"name": "limit", "in": "query", "required": False,
          "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
          "description": "Messages per page."})
_OF_PERSONA = ({"name": "persona_id", "in": "query", "required": True,
                "schema": {"type": "string", "minLength": 1}},)
_ONE, _LAST = "/api/sessions/{sid}", "/api/sessions/{sid}/messages/last"
_BUSY = "`409 session_busy` while a reply streams in the session."
SESSIONS = (
    Op("get", "/api/sessions", "One persona's sessions, most recently active first.",
       SessionList, errors="400 404", params=_OF_PERSONA),
    Op("post", "/api/sessions", "Start a session with a persona.", Session, SessionCreate,
       "400 404", "201"),
    Op("get", _ONE, "The session with one page of its active branch (oldest first).",
       SessionPage, errors="400 404", params=_PAGE),
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
    return {**table_paths("personas", PERSONAS), **table_paths("sessions", SESSIONS),
            **table_paths("messages", MESSAGES)}

