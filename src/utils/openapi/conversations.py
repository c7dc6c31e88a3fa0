"""Personas, sessions and the last message of a session (DESIGN §7)."""
from ..models import conversations as c, personas as p, sessions as s
from .table import Op

_PERSONA, _ONE, _LAST = "/api/personas/{pid}", "/api/sessions/{sid}", "/api/sessions/{sid}/messages/last"
_PAGE = ({"name": "before", "in": "query", "required": False, "schema": {"type": "integer",
          "minimum": 1}, "description": "Only messages with a smaller id (the smallest id you have)."},
         {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer",
          "minimum": 1, "maximum": 200, "default": 50}, "description": "Messages per page."})
_OF_PERSONA = ({"name": "persona_id", "in": "query", "required": True,
                "schema": {"type": "string", "minLength": 1}},)
ROUTES = {"personas": (
    Op("get", "/api/personas", "All personas, the default one first.", p.PersonaList),
    Op("post", "/api/personas", "Create a persona (its cortex files come from the templates).",
       p.Persona, p.PersonaCreate, "400", "201"),
    Op("get", _PERSONA, "One persona.", p.Persona, errors="404"),
    Op("put", _PERSONA, "Change the fields given.", p.Persona, p.PersonaPatch, "400 404"),
    Op("delete", _PERSONA, "Delete a persona with its sessions, messages, cortex files and "
       "revisions.", s.Deleted, errors="400 404 409", description="The default persona cannot "
       "be deleted (`409 default_persona`). The request has no body (or a JSON one)."),
), "sessions": (
    Op("get", "/api/sessions", "One persona's sessions, most recently active first.",
       s.SessionList, errors="400 404", params=_OF_PERSONA),
    Op("post", "/api/sessions", "Start a session with a persona.", s.Session, c.SessionCreate,
       "400 404", "201"),
    Op("get", _ONE, "The session with one page of its active branch (oldest first).",
       s.SessionPage, errors="400 404", params=_PAGE),
    Op("patch", _ONE, "Rename the session, pick its greeting (before the first message) or "
       "its user persona.", s.Session, c.SessionPatch, "400 404 409"),
    Op("delete", _ONE, "Delete the session and its messages.", s.Deleted, errors="400 404"),
), "messages": (
    Op("put", _LAST, "Edit the active branch's last user message: a new sibling and branch "
       "(the old one is kept); then regenerate for its reply.", s.EditedPage, c.MessageEdit,
       "400 404 409"),
    Op("delete", _LAST, "Delete the last exchange (the active branch's last user message and "
       "everything below it, alternatives included).", s.DeletedExchange, errors="400 404 409"),
    Op("patch", "/api/messages/{mid}", "Edit any message as a new sibling (a new branch).",
       s.EditedPage, c.MessageEdit, "400 404 409"),
    Op("get", "/api/sessions/{sid}/messages/{mid}", "One message with its memory provenance.",
       s.MessageDetail, errors="400 404"),
    Op("put", "/api/sessions/{sid}/active", "Make the branch through a message (its newest "
       "leaf) the active one.", s.SwitchedBranch, c.BranchChoice, "400 404 409"),
)}
