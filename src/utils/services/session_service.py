"""Sessions: one conversation with one persona, read back one page of messages at a time."""
import logging
import re
import sqlite3
from collections.abc import Callable, Sequence

from ..limits import MESSAGE_PAGE, SESSION_TITLE
from ..models.sessions import Message, MessageDetail, Session
from ..storage import (
    Database,
    messages as message_store,
    personas as persona_store,
    provenance,
    sessions as store,
    tree,
)
from . import greetings, memory_notes, validation as check
from .errors import invalid, not_found
from .ids import is_persona_id, is_session_id, new_id

log = logging.getLogger(__name__)
ID_LENGTH = 16
TITLE_MAX = SESSION_TITLE
PAGE_DEFAULT, PAGE_MAX = MESSAGE_PAGE["default"], MESSAGE_PAGE["max"]
_WHITESPACE = re.compile(r"\s+")


class SessionService:
    """Creates, lists, reads, renames and deletes sessions; reads messages page by page."""

    def __init__(self, db: Database, retracted: Callable[[str], object] | None = None,
                 ring: Callable[[], None] = lambda: None):
        self._db = db
        self._retracted = retracted
        self._ring = ring  # tells the processes generating replies that a mark was left

    def create(self, persona_id: str, greeting_index: int = 0) -> Session:
        """A new, untitled session for an existing persona; 404 when the persona is unknown."""
        self._require_persona(persona_id)
        persona = persona_store.get_persona(self._db.conn(), persona_id)
        assert persona is not None  # required just above
        greeting_index = greetings.check_index(persona, greeting_index)
        for _ in range(5):
            try:
                return store.create_session(self._db.conn(), new_id(ID_LENGTH), persona_id,
                                            greeting_index=greeting_index)
            except sqlite3.IntegrityError:
                self._require_persona(persona_id)
        raise RuntimeError("could not find a free session id")

    def list(self, persona_id: str) -> list[Session]:
        """The persona's sessions, most recently active first; 404 when the persona is unknown."""
        self._require_persona(persona_id)
        return store.list_sessions(self._db.conn(), persona_id)

    def get(self, session_id: str, before_id: int | None = None,
            limit: int = PAGE_DEFAULT) -> dict:
        """The session with one page of its active branch (oldest first, each message with the
        ids of its alternatives) and whether older ones exist."""
        if before_id is not None:
            check.integer("before", before_id, low=1, high=2**63 - 1)
        check.integer("limit", limit, low=1, high=PAGE_MAX)
        session = self.summary(session_id)
        conn = self._db.conn()
        page = message_store.list_messages(conn, session_id, before_id=before_id, limit=limit,
                                           siblings=tree.siblings(conn, session_id))
        has_more = bool(page) and message_store.count_messages(
            conn, session_id, before_id=page[0].id) > 0
        self._want_text(conn, page)
        return {**session.model_dump(mode="json"), "messages": [m.answer() for m in page],
                "has_more": has_more}

    def message(self, session_id: str, message_id: int) -> MessageDetail:
        """One message of the session with its memory provenance: the revisions its prompt
        held (`cortex_revisions`, replies) and those anchored to it (`memory`)."""
        self.summary(session_id)
        conn = self._db.conn()
        message = message_store.get_message(conn, message_id, tree.siblings(conn, session_id)) \
            if 0 < message_id < 2**63 else None
        if message is None or message.session_id != session_id:
            raise not_found("message", str(message_id))
        on_branch = message_store.is_on_branch(conn, message_id)
        self._want_text(conn, [message])
        return MessageDetail.model_validate(
            {**message.answer(), "memory": provenance.revisions_of_message(conn, message_id),
             "on_branch": on_branch})

    def summary(self, session_id: str) -> Session:
        """The session object without messages; 404 when unknown."""
        session = None
        if is_session_id(session_id):
            session = store.get_session(self._db.conn(), session_id)
        if session is None:
            raise not_found("session", session_id)
        return session

    def rename(self, session_id: str, title: str | None) -> Session:
        """Sets a title the person chose (1..120 characters, one line)."""
        if title is None:
            raise invalid("title", "is required")
        title = check.text("title", title, max_len=TITLE_MAX, min_len=1, single_line=True)
        self.summary(session_id)
        store.set_session_title(self._db.conn(), session_id, title)
        return self.summary(session_id)

    def choose_greeting(self, session_id: str, index: int) -> Session:
        """Picks which of the persona's greetings opens the session (before its first message)."""
        session = self.summary(session_id)
        persona = persona_store.get_persona(self._db.conn(), session.persona_id)
        assert persona is not None  # a session's persona exists
        index = greetings.check_index(persona, index)
        if not store.set_greeting_index(self._db.conn(), session_id, index):
            raise greetings.started()
        return self.summary(session_id)

    def set_title(self, session_id: str, title: str) -> Session | None:
        """Stores a generated title unless the session already has one (a rename wins).

        The text is model output: whitespace is collapsed, quotes trimmed and the length capped.
        Returns the session when the title was applied, else None.
        """
        cleaned = _WHITESPACE.sub(" ", title or "").strip().strip("\"'“”„«»").strip()
        cleaned = "".join(ch for ch in cleaned if ch.isprintable())[:TITLE_MAX].rstrip()
        if not cleaned or not is_session_id(session_id):
            return None
        if not store.set_session_title(self._db.conn(), session_id, cleaned,
                                       only_if_untitled=True):
            return None
        return store.get_session(self._db.conn(), session_id)

    def memory_notes(self, session_id: str) -> dict:
        """What the persona's memory updates took from this conversation, as notes placed after
        the message each update read up to (`services/memory_notes.py`)."""
        session = self.summary(session_id)
        return {"session_id": session_id, "notes": memory_notes.notes(
            self._db.conn(), session_id, session.persona_id)}

    def delete(self, session_id: str) -> None:
        """Deletes the session and its messages; 404 when unknown."""
        session = self.summary(session_id)
        if not store.delete_session(self._db.conn(), session_id):
            raise not_found("session", session_id)
        self._ring()  # a reply it was generating stops now (its row is gone)
        log.info("Deleted session %s", session_id)
        if self._retracted is not None:
            try:
                self._retracted(session.persona_id)
            except Exception:
                log.exception("Could not check persona %s for memory reconciliation",
                              session.persona_id)

    def _want_text(self, conn: sqlite3.Connection, shown: Sequence[Message]) -> None:
        """Asks the process generating a reply shown here to keep its row's text current (it
        otherwise writes it only now and then until the reply ends: generations.py), so a page
        read again, in any process, shows the reply growing (`mark_followed` leaves a reply
        already marked alone)."""
        streaming = [m.id for m in shown if m.streaming]
        if streaming and message_store.mark_followed(conn, streaming):
            self._ring()

    def _require_persona(self, persona_id: str | None) -> None:
        if persona_id is None:
            raise invalid("persona_id", "is required")
        if not isinstance(persona_id, str):
            raise invalid("persona_id", "must be a string")
        known = is_persona_id(persona_id) and (
            persona_store.get_persona(self._db.conn(), persona_id) is not None)
        if not known:
            raise not_found("persona", persona_id)
