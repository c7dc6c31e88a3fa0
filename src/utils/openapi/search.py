"""Conversation search (FTS5), export of one conversation and its memory notes."""
from ...routes import search, sessions
from ..models import search as s
from .table import Op, model_ref, query, query_of

_EXPORT = {"description": "The conversation as an attachment.", "content": {
    "text/markdown": {"schema": {"type": "string"}},
    "application/json": {"schema": model_ref(s.ConversationExport)}}}
ROUTES = {"sessions": (
    Op(search.search, s.SearchResults, errors="400 404", params=query_of(s.SearchQuery)),
    Op(search.export_session, _EXPORT, errors="400 404",
       params=(query("format", {"enum": ["md", "json"], "default": "md"}),)),
    Op(sessions.memory_notes, s.MemoryNotes, errors="404"),
)}
