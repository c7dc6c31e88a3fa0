"""Personas, sessions and the last message of a session (DESIGN §7)."""
from ...routes import branches, messages, personas, sessions
from ..limits import MESSAGE_PAGE
from ..models import conversations as c, personas as p, sessions as s
from .table import Op, query

_PAGE = (query("before", {"type": "integer", "minimum": 1}, "Only messages with a smaller id (the "
               "smallest id you have)."),
         query("limit", {"type": "integer", "minimum": 1, "maximum": MESSAGE_PAGE["max"],
                         "default": MESSAGE_PAGE["default"]}, "Messages per page."))
_OF_PERSONA = (query("persona_id", {"type": "string", "minLength": 1}, required=True),)
ROUTES = {"personas": (
    Op(personas.list_personas, p.PersonaList),
    Op(personas.create_persona, p.Persona, p.PersonaCreate, "400", "201"),
    Op(personas.get_persona, p.Persona, errors="404"),
    Op(personas.update_persona, p.Persona, p.PersonaPatch, "400 404"),
    Op(personas.delete_persona, s.Deleted, errors="400 404 409"),
), "sessions": (
    Op(sessions.list_sessions, s.SessionList, errors="400 404", params=_OF_PERSONA),
    Op(sessions.create_session, s.Session, c.SessionCreate, "400 404", "201"),
    Op(sessions.get_session, s.SessionPage, errors="400 404", params=_PAGE),
    Op(sessions.rename_session, s.Session, c.SessionPatch, "400 404 409"),
    Op(sessions.delete_session, s.Deleted, errors="400 404"),
), "messages": (
    Op(messages.edit_last, s.EditedPage, c.MessageEdit, "400 404 409"),
    Op(messages.delete_last, s.DeletedExchange, errors="400 404 409"),
    Op(branches.edit_message, s.EditedPage, c.MessageEdit, "400 404 409"),
    Op(messages.read_message, s.MessageDetail, errors="400 404"),
    Op(branches.switch_branch, s.SwitchedBranch, c.BranchChoice, "400 404 409"),
)}
