"""Conversation search (FTS5) and export of one conversation."""
from ..limits import SEARCH_QUERY
from .common import SESSION_PARAM, errors, json_response, obj, operation, ref

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
                        "messages": {"type": "array", "items": ref("Message")}},
                        required=("session", "persona", "messages"))}}},
                 **errors("400", "404")},
                parameters=[{"name": "format", "in": "query", "required": False,
                             "schema": {"enum": ["md", "json"], "default": "md"}}]),
        },
    }
