"""Conversation search (FTS5), export of one conversation and its memory notes."""
from ..models.search import ConversationExport, MemoryNotes, SearchQuery, SearchResults
from .table import Op, model_ref, query_of, table_paths

_EXPORT = {"description": "The conversation as an attachment.", "content": {
    "text/markdown": {"schema": {"type": "string"}},
    "application/json": {"schema": model_ref(ConversationExport)}}}
ROUTES = (
    Op("get", "/api/search", "Search one persona's conversations.", SearchResults,
       errors="400 404", params=query_of(SearchQuery), description="Every word must occur (as a "
       "word or the start of one); case and accents are ignored. The words are never read as "
       "query syntax."),
    Op("get", "/api/sessions/{sid}/export", "Download the conversation as Markdown or JSON.",
       _EXPORT, errors="400 404", params=({"name": "format", "in": "query", "required": False,
                                          "schema": {"enum": ["md", "json"], "default": "md"}},)),
    Op("get", "/api/sessions/{sid}/memory-notes",
       "What memory updates took from the conversation.", MemoryNotes, errors="404",
       description="One note per update and session, placed after the last message of the "
                   "active branch the update read (\"Mira remembered: …\"). Derived from the AI "
                   "revisions on every read; consolidations and the person's own edits make no "
                   "notes."),
)


def paths() -> dict:
    """The search and export paths."""
    return table_paths("sessions", ROUTES)
