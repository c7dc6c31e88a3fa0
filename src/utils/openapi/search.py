"""Conversation search (FTS5), export of one conversation and its memory notes."""
from ..limits import SEARCH_QUERY
from .common import SESSION_PARAM, errors, json_response, nullable, obj, operation, ref

SCHEMAS = {
    "SearchResult": obj({
        "session_id": {"type": "string"},
        "message_id": {"type": "integer"},
        "snippet": {"type": "string", "description": "Plain text around the hit (never markup)."},
        "highlights": {"type": "array", "items": {
            "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            "description": "[start, end) character ranges of the matched words in `snippet`."},
        "role": {"enum": ["user", "assistant"]},
        "created_at": {"type": "string"},
        "session_title": {"type": "string"},
    }, required=("session_id", "message_id", "snippet", "highlights")),
    "MemoryNote": obj({
        "after_message_id": {"type": "integer", "description": "The last message of the active "
                             "branch the update read; the note is shown after it."},
        "job_id": nullable({"type": "string"}),
        "created_at": {"type": "string"},
        "files": {"type": "array", "items": obj({
            "filename": {"enum": ["memory.md", "soul.md", "relationship.md"]},
            "rev": {"type": "integer", "description": "The revision; its diff is in the history."},
            "added": {"type": "array", "items": {"type": "string"}, "maxItems": 6,
                      "description": "Lines the update added (trimmed, at most 300 characters)."},
            "more": {"type": "integer", "minimum": 0, "description": "Further added lines."}},
            required=("filename", "rev", "added", "more"))},
    }, required=("after_message_id", "job_id", "created_at", "files")),
}


def paths() -> dict:
    """The search and export paths."""
    return {
        "/api/search": {
            "get": operation(
                "searchMessages", "sessions", "Search one persona's conversations.",
                {"200": json_response("Matching messages, best first (at most 50).", obj(
                    {"results": {"type": "array", "items": ref("SearchResult")}},
                    required=("results",))), **errors("400", "404")},
                description="Every word must occur (as a word or the start of one); case and "
                            "accents are ignored. The words are never read as query syntax.",
                parameters=[
                    {"name": "persona_id", "in": "query", "required": True,
                     "schema": {"type": "string", "minLength": 1}},
                    {"name": "q", "in": "query", "required": True,
                     "schema": {"type": "string", "minLength": 1, "maxLength": SEARCH_QUERY}}]),
        },
        "/api/sessions/{sid}/export": {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "exportSession", "sessions", "Download the conversation as Markdown or JSON.",
                {"200": {"description": "The conversation as an attachment.", "content": {
                    "text/markdown": {"schema": {"type": "string"}},
                    "application/json": {"schema": obj({
                        "session": ref("Session"), "persona": obj({"id": {"type": "string"},
                                                                    "name": {"type": "string"}}),
                        "messages": {"type": "array", "items": ref("Message"),
                                     "description": "The active branch, oldest first."},
                        "alternatives": {"type": "array", "items": ref("Message"),
                                         "description": "The messages off the active branch "
                                                        "(each with its `parent_id`)."}},
                        required=("session", "persona", "messages"))}}},
                 **errors("400", "404")},
                parameters=[{"name": "format", "in": "query", "required": False,
                             "schema": {"enum": ["md", "json"], "default": "md"}}]),
        },
        "/api/sessions/{sid}/memory-notes": {
            "parameters": [SESSION_PARAM],
            "get": operation(
                "sessionMemoryNotes", "sessions", "What memory updates took from the conversation.",
                {"200": json_response("Notes, oldest first (at most 100).", obj(
                    {"session_id": {"type": "string"},
                     "notes": {"type": "array", "items": ref("MemoryNote")}},
                    required=("session_id", "notes"))), **errors("404")},
                description="One note per update and session, placed after the last message of "
                            "the active branch the update read (\"Mira remembered: …\"). "
                            "Derived from the AI revisions on every read; consolidations and the "
                            "person's own edits make no notes."),
        },
    }
