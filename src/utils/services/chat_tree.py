"""Changing the conversation tree: edit any message, switch branches, the classic "last" edits.

Nothing here deletes history except an explicit delete: editing a person's message adds a
sibling (a new branch whose reply the client asks for), editing a reply adds a sibling marked
`edited`, and switching moves the session's active leaf. Each is refused while a reply streams
in the session (the session is claimed for the change, across worker processes).
"""
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..limits import MESSAGE
from ..models.sessions import Message, SessionRow
from ..storage import (
    Database,
    exchanges,
    messages as message_store,
    sessions as session_store,
    tree,
)
from .errors import ServiceError, invalid, not_found
from .ids import is_session_id
from .session_leases import SessionLeases
from .validation import encodable

MESSAGE_MAX = MESSAGE
log = logging.getLogger(__name__)


class ChatTree:
    """The tree operations of the chat service (the streaming half lives in ChatService)."""

    def __init__(self, db: Database, leases: SessionLeases,
                 retracted: Callable[[str], object] | None = None):
        self._db = db
        self._leases = leases
        self._retracted = retracted

    def notice(self, persona_id: str) -> None:
        """Tells memory that the conversation changed (it reconciles what left it)."""
        if self._retracted is None:
            return
        try:
            self._retracted(persona_id)
        except Exception:
            log.exception("Could not check persona %s for memory reconciliation", persona_id)

    def session(self, session_id: object) -> SessionRow:
        """The session row (without the API's message count); ServiceError 404 when unknown."""
        found = None
        if isinstance(session_id, str) and is_session_id(session_id):
            found = session_store.get_session_row(self._db.conn(), session_id)
        if found is None:
            raise not_found("session", str(session_id))
        return found

    def message(self, message_id: object) -> Message:
        """The message; ServiceError 404 when unknown (or not a message id at all)."""
        found = None
        if isinstance(message_id, int) and not isinstance(message_id, bool) and \
                0 < message_id < 2**63:
            found = message_store.get_message(self._db.conn(), message_id)
        if found is None:
            raise not_found("message", str(message_id))
        return found

    def edit_message(self, message_id: int, content: str) -> Message:
        """A sibling of the message with `content` that becomes the active branch's end: for a
        person's message the reply is asked for next; a reply's sibling is marked `edited`."""
        original = self.message(message_id)
        check_text("content", content)
        with self.exclusive(original.session_id), self._db.transaction():
            if original.streaming:
                raise busy()
            added = message_store.add_message(
                self._db.conn(), original.session_id, original.role, content,
                parent_id=original.parent_id, edited=original.role == "assistant",
                cause="edit")
            edited = self.message(added["id"])  # add_message answers the chat turn's dict row
        self.notice(original.persona_id)
        return edited

    def switch(self, session_id: str, message_id: int) -> int:
        """Makes the branch through `message_id` (its newest leaf) active; returns the leaf."""
        self.session(session_id)
        target = self.message(message_id)
        if target.session_id != session_id:
            raise not_found("message", str(message_id))
        with self.exclusive(session_id), self._db.transaction():
            leaf = tree.latest_leaf(self._db.conn(), message_id, session_id)
            assert leaf is not None  # the message itself when it has no children
            tree.set_active(self._db.conn(), session_id, leaf, "switch")
        self.notice(target.persona_id)
        return leaf

    def edit_last(self, session_id: str, content: str) -> Message:
        """Edits the active branch's last message of the person (a new branch; see edit_message)."""
        self.session(session_id)
        check_text("content", content)
        user = exchanges.last_message(self._db.conn(), session_id, "user")
        if user is None:
            raise ServiceError(409, "nothing_to_edit", "This session has no message to edit.")
        return self.edit_message(user.id, content)

    def delete_last(self, session_id: str) -> list[int]:
        """Deletes the last exchange of the active branch (the person's last message and
        everything below it); returns the deleted ids."""
        self.session(session_id)
        with self.exclusive(session_id), self._db.transaction():
            conn = self._db.conn()
            last = exchanges.last_message(conn, session_id)
            if last is None:
                raise ServiceError(409, "nothing_to_delete", "This session has no messages.")
            first = exchanges.last_message(conn, session_id, "user") or last
            doomed = tree.subtree_ids(conn, first.id)
            message_store.delete_message(conn, first.id)
        self.notice(first.persona_id)
        return doomed

    def _regenerate_target(self, session_id: str, message_id: int | None
                           ) -> tuple[Message, Message | None]:
        """(the person's message to answer, the reply being replaced or None)."""
        if message_id is None:
            last = exchanges.last_message(self._db.conn(), session_id)
        else:
            last = self.message(message_id)
            if last.session_id != session_id:
                raise not_found("message", str(message_id))
        if last is None:
            raise ServiceError(409, "nothing_to_regenerate", "This session has no message to "
                               "answer.")
        if last.role == "user":
            return last, None
        if last.parent_id is None:
            raise ServiceError(409, "nothing_to_regenerate", "This reply answers no message.")
        return self.message(last.parent_id), last

    def _continue_target(self, session_id: str, message_id: int) -> Message:
        reply = self.message(message_id)
        if reply.session_id != session_id:
            raise not_found("message", str(message_id))
        if reply.role != "assistant" or not reply.content.strip():
            raise ServiceError(409, "nothing_to_continue", "Only a reply with some text can "
                               "be continued.")
        if tree.latest_leaf(self._db.conn(), reply.id, session_id) != reply.id:
            raise ServiceError(409, "not_last", "Only the last reply of a branch can be "
                               "continued.")
        return reply

    @contextmanager
    def exclusive(self, session_id: str) -> Iterator[None]:
        """Holds the session (no reply may start) for a change to its tree."""
        if not self._leases.claim(session_id):
            raise busy()
        try:
            yield
        finally:
            self._leases.release(session_id)


def busy() -> ServiceError:
    """The error for a session that is generating a reply."""
    return ServiceError(409, "session_busy", "A reply is still streaming in this session: "
                        "stop it or wait for it to finish.")


def check_text(field: str, value: object) -> str:
    """Message text: a non-empty string of at most MESSAGE_MAX characters (returned)."""
    if not isinstance(value, str) or not value.strip():
        raise invalid(field, "must be a non-empty string")
    encodable(field, value)
    if len(value) > MESSAGE_MAX:
        raise invalid(field, f"must not be longer than {MESSAGE_MAX} characters")
    return value
