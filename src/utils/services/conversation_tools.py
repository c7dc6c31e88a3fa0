"""Finding and taking out conversations: search across one persona's sessions and export of one
session as Markdown or JSON (the JSON also holds the alternatives off the active branch, so a
re-import rebuilds the whole tree: docs/chat-import.md)."""
import json

from ..limits import SEARCH_QUERY
from ..models.search import SearchResults
from ..models.sessions import Message, Session
from ..storage import (
    Database,
    messages as message_store,
    personas as persona_store,
    sessions as session_store,
)
from ..storage.search import fts_query, search_messages
from .errors import invalid, not_found
from .ids import is_persona_id, is_session_id

EXPORT_FORMATS = ("md", "json")
_ALL = 2**62
_EXPORT_ORDER = ("id", "persona_id", "title", "greeting_index", "created_at", "updated_at",
                 "message_count", "active_leaf_id", "user_persona_id", "imported")
_MESSAGE_ORDER = ("id", "session_id", "persona_id", "role", "content", "created_at", "parent_id",
                  "stop_reason", "status", "edited", "error")
_ROLE_NAMES = {"user": "You", "assistant": None}


class ConversationTools:
    """Search and export; reads only, so it needs nothing but the database."""

    def __init__(self, db: Database):
        self._db = db

    def search(self, persona_id: str | None, text: str | None) -> SearchResults:
        """The persona's messages on active branches that hold every word, best first."""
        if not isinstance(persona_id, str) or not persona_id:
            raise invalid("persona_id", "is required")
        if not isinstance(text, str) or not text.strip():
            raise invalid("q", "is required: the words to look for")
        if len(text) > SEARCH_QUERY:
            raise invalid("q", f"must not be longer than {SEARCH_QUERY} characters")
        conn = self._db.conn()
        if not is_persona_id(persona_id) or persona_store.get_persona(conn, persona_id) is None:
            raise not_found("persona", persona_id)
        query = fts_query(text)
        return SearchResults(results=search_messages(conn, persona_id, query) if query else [])

    def export(self, session_id: str, fmt: str) -> tuple[str, str, str]:
        """The session as (body, media type, file name) in `fmt` ("md" or "json")."""
        if fmt not in EXPORT_FORMATS:
            raise invalid("format", "must be md or json")
        conn = self._db.conn()
        session = session_store.get_session(conn, session_id) if is_session_id(session_id) else None
        if session is None:
            raise not_found("session", session_id)
        persona = persona_store.get_persona(conn, session.persona_id)
        name = persona.name if persona else "Persona"
        messages = message_store.list_messages(conn, session_id, limit=_ALL)
        stem = f"conversation-{session_id}"
        if fmt == "json":
            alternatives = message_store.off_branch_messages(conn, session_id)
            body = {"session": _in_stored_order(session),
                    "persona": {"id": session.persona_id, "name": name},
                    "messages": [_exported(m) for m in messages],
                    "alternatives": [_exported(m) for m in alternatives]}
            return json.dumps(body, ensure_ascii=False, indent=2) + "\n", "application/json", f"{stem}.json"
        return _markdown(session, name, messages), "text/markdown; charset=utf-8", f"{stem}.md"


def _in_stored_order(session: Session) -> dict:
    """The session for the JSON export, its keys in the order exports have always had (the
    table's, not the model's: an export file should not change for a refactor)."""
    shown = session.model_dump(mode="json")
    return {key: shown.pop(key) for key in _EXPORT_ORDER} | shown


def _exported(message: Message) -> dict:
    """A message for the JSON export, its keys in the order exports have always had (a
    reply's `cortex_revisions` and `world_info` last)."""
    shown = message.answer()
    return {key: shown.pop(key) for key in _MESSAGE_ORDER} | shown


def _markdown(session: Session, persona_name: str, messages: list[Message]) -> str:
    title = session.title or "Conversation"
    lines = [f"# {title}", "", f"With {persona_name} · started {session.created_at}", ""]
    for message in messages:
        who = _ROLE_NAMES.get(message.role) or persona_name
        note = " (incomplete)" if message.status == "incomplete" else ""
        lines += [f"## {who}{note}", f"<sub>{message.created_at}</sub>", "", message.content, ""]
    return "\n".join(lines)

