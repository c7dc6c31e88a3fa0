"""Chat import (DESIGN §16): a chat file becomes a new conversation of a persona.

The file is parsed and checked completely before anything is written (`chats.read_chat`), off
the gevent event loop (`cooperative.offload`, like cards and archives: a 16 MB file takes a
while to parse, and a parse in a thread of the worker would hold its GIL); the session and all its messages are then stored in one
SQLite transaction, so a refusal or a failure leaves nothing behind. Imported messages are
marked `imported` and do not count towards an automatic cortex update (docs/chat-import.md).
"""
import logging
import sqlite3

from ..cooperative import offload
from ..services.ids import new_id
from ..services.persona_service import PersonaService
from ..services.session_service import ID_LENGTH
from ..storage import Database, imports, sessions as session_store
from .chats import ParsedChat, read_chat

log = logging.getLogger(__name__)


class ChatImportService:
    """Previews and imports chat files into a persona's conversations."""

    def __init__(self, db: Database, personas: PersonaService):
        self._db = db
        self._personas = personas

    def preview(self, persona_id: str, data: bytes) -> dict:
        """What an import of `data` would create; nothing is stored."""
        self._personas.get(persona_id)
        return summary(offload(read_chat, data))

    def import_chat(self, persona_id: str, data: bytes) -> dict:
        """Stores the chat as a new session of the persona; returns the session with the
        import's summary under `summary`."""
        self._personas.get(persona_id)
        chat = offload(read_chat, data)
        rows = [(n.role, n.content, n.status, n.created_at, n.parent) for n in chat.nodes]
        for _ in range(5):
            session_id = new_id(ID_LENGTH)
            try:
                with self._db.transaction() as conn:
                    imports.insert_conversation(conn, session_id, persona_id, chat.title, rows,
                                                chat.active_leaf)
                break
            except sqlite3.IntegrityError:
                self._personas.get(persona_id)
        else:
            raise RuntimeError("could not find a free session id")
        log.info("Imported a %s chat of %d messages into session %s of %s", chat.format,
                 len(rows), session_id, persona_id)
        session = session_store.get_session(self._db.conn(), session_id)
        assert session is not None  # inserted just above
        return {**session.model_dump(mode="json"), "summary": summary(chat)}


def summary(chat: ParsedChat) -> dict:
    """The counts a preview shows: messages on the active branch, alternatives, dates, names."""
    on_branch, leaf = 0, chat.active_leaf
    while leaf is not None:
        on_branch += 1
        leaf = chat.nodes[leaf].parent
    branch_points = _branch_points([node.parent for node in chat.nodes])
    dates = [node.created_at for node in chat.nodes]
    return {"format": chat.format, "title": chat.title, "messages": on_branch,
            "stored": len(chat.nodes), "alternatives": len(chat.nodes) - on_branch,
            "branch_points": branch_points, "first_date": min(dates), "last_date": max(dates),
            "user_name": chat.user_name, "character_name": chat.character_name,
            "names": chat.names, "skipped_system": chat.skipped, "undated": chat.undated}


def _branch_points(parents: list[int | None]) -> int:
    """How many messages have more than one child (or roots beside each other)."""
    seen: dict[int | None, int] = {}
    for parent in parents:
        seen[parent] = seen.get(parent, 0) + 1
    return sum(1 for count in seen.values() if count > 1)
