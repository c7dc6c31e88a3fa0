"""Personas, sessions and the last message of a session (DESIGN §7)."""
from ..models import conversations as c, personas as p, sessions as s
from ...routes import branches, messages, personas, sessions
from .table import Op, query

_PERSONA, _ONE = "/api/personas/{pid}", "/api/sessions/{sid}"
_LAST = _ONE + "/messages/last"
_PAGE = (query("before", {"type": "integer", "minimum": 1}, "Only messages with a smaller id (the "
               "smallest id you have)."),
         query("limit", {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
               "Messages per page."))
_OF_PERSONA = (query("persona_id", {"type": "string", "minLength": 1}, required=True),)
ROUTES = {"personas": (
    Op("get", "/api/personas", personas.list_personas, p.PersonaList),
    Op("post", "/api/personas", personas.create_persona, p.Persona, p.PersonaCreate, "400", "201"),
    Op("get", _PERSONA, personas.get_persona, p.Persona, errors="404"),
    Op("put", _PERSONA, personas.update_persona, p.Persona, p.PersonaPatch, "400 404"),
    Op("delete", _PERSONA, personas.delete_persona, s.Deleted, errors="400 404 409"),
), "sessions": (
    Op("get", "/api/sessions", sessions.list_sessions, s.SessionList, errors="400 404",
       params=_OF_PERSONA),
    Op("post", "/api/sessions", sessions.create_session, s.Session, c.SessionCreate, "400 404",
       "201"),
    Op("get", _ONE, sessions.get_session, s.SessionPage, errors="400 404", params=_PAGE),
    Op("patch", _ONE, sessions.rename_session, s.Session, c.SessionPatch, "400 404 409"),
    Op("delete", _ONE, sessions.delete_session, s.Deleted, errors="400 404"),
), "messages": (
    Op("put", _LAST, messages.edit_last, s.EditedPage, c.MessageEdit, "400 404 409"),
    Op("delete", _LAST, messages.delete_last, s.DeletedExchange, errors="400 404 409"),
    Op("patch", "/api/messages/{mid}", branches.edit_message, s.EditedPage, c.MessageEdit,
       "400 404 409"),
    Op("get", "/api/sessions/{sid}/messages/{mid}", messages.read_message, s.MessageDetail,
       errors="400 404"),
    Op("put", "/api/sessions/{sid}/active", branches.switch_branch, s.SwitchedBranch,
       c.BranchChoice, "400 404 409"),
)}
