"""Chat turns on the conversation tree, generated independently of any connection (DESIGN §6, §13).

Starting a reply validates, claims the session (one reply per session across worker processes),
stores the person's message and an empty streaming reply, and launches the generation in its own
thread; transports only follow it (`follow`, `resume`), so leaving never stops it and `stop` is an
explicit request. The prompt is the branch that ends at the message being answered, nothing else.
"""
import logging
import sqlite3
import threading
from collections.abc import Callable, Generator
from datetime import datetime

from ..api_request import ApiClient
from ..cortex import CortexService
from ..models.sessions import Message, SessionRow
from ..storage import Database, messages as message_store, tree
from . import chat_events as events, chat_prompt, prompt_record
from .chat_events import ChatEvent
from .chat_replies import Outcome, failure_outcome, stream_reply
from .chat_titles import TitleGenerator
from .chat_tree import ChatTree, busy, check_text
from .generations import Generation, GenerationHub
from .prompt_record import SentCapture
from .session_leases import SessionLeases
from .settings_service import SettingsService

log = logging.getLogger(__name__)
NO_CORTEX = {"triggered": False, "job_id": None, "progress": None, "frequency": None}
INTERRUPTED = {"code": "interrupted", "retryable": True,
               "message": "The server stopped while this reply was being written."}


class ChatService(ChatTree):
    """Runs chat turns: builds the prompt, streams the reply, stores both sides, triggers the cortex."""

    def __init__(self, db: Database, api_client: ApiClient, cortex_service: CortexService,
                 settings: SettingsService, leases: SessionLeases, *,
                 trigger: Callable[[str, str], dict] | None = None,
                 titles: TitleGenerator | None = None,
                 retracted: Callable[[str], object] | None = None,
                 status: Callable[[str], dict] | None = None,
                 clock: Callable[[], datetime] | None = None, hub: GenerationHub | None = None):
        super().__init__(db, leases, retracted)
        self._api = api_client
        self._prompt = chat_prompt.ChatPrompt(db, cortex_service, settings, clock)
        self._trigger = trigger
        self._status = status
        self.titles = titles
        self.hub = hub or GenerationHub(db)

    def start_chat(self, session_id: str, message: object) -> Generation:
        """Stores `message` under the active leaf and starts its reply."""
        session = self.session(session_id)
        text = check_text("message", message)

        def prepare() -> tuple[dict, dict]:
            return message_store.add_exchange(self._db.conn(), session_id, text)
        return self._launch(session, prepare)

    def start_regenerate(self, session_id: str, message_id: int | None = None) -> Generation:
        """A new reply to a person's message, kept as an alternative of earlier replies.

        `message_id` is a reply (answered again) or a person's message; default: the end of the
        active branch. An empty failed reply is replaced instead of kept as an alternative."""
        session = self.session(session_id)

        def prepare() -> tuple[dict, dict]:
            conn = self._db.conn()
            user, old = self._regenerate_target(session_id, message_id)
            if old is not None and old.error is not None and not old.content.strip():
                message_store.delete_message(conn, old.id, cause="regenerate")
            return _launched(user), self._new_reply(session_id, user.id, "regenerate")
        generation = self._launch(session, prepare)
        self.notice(session.persona_id)
        return generation

    def start_continue(self, session_id: str, message_id: int) -> Generation:
        """Lets the model continue a reply from its text (it must be a leaf)."""
        session = self.session(session_id)

        def prepare() -> tuple[dict, dict]:
            reply = self._continue_target(session_id, message_id)
            text = reply.content.rstrip()
            message_store.resume_reply(self._db.conn(), reply.id, text)
            tree.set_active(self._db.conn(), session_id, reply.id, "switch")
            return _launched(self.message(reply.parent_id)), _launched(reply, text)
        generation = self._launch(session, prepare)
        self.notice(session.persona_id)
        return generation

    def follow(self, generation: Generation, *, from_start: bool = False,
               detached: threading.Event | None = None) -> Generator[ChatEvent, None, None]:
        """`start`, then the text (from the beginning, or only what is new), then the end."""
        yield generation.start_event()
        offset = 0 if from_start else generation.prefix_length
        yield from self.hub.follow(generation, offset, detached)

    def resume(self, session_id: str, offset: int | None = None, reply_id: int | None = None,
               detached: threading.Event | None = None) -> Generator[ChatEvent, None, None] | None:
        """Follows the reply being generated in the session, in any process: `start`, the text
        so far as one chunk, then live chunks and the end. With `reply_id`/`offset` (an SSE
        Last-Event-ID) it continues after `offset` without a new `start`. None: nothing to follow."""
        self.session(session_id)
        conn = self._db.conn()
        row = message_store.get_message(conn, reply_id) if reply_id else \
            message_store.streaming_reply(conn, session_id)
        if row is None or row.session_id != session_id or row.role != "assistant":
            return None
        local = self.hub.local(row.id)
        if reply_id is None and local is None and not row.streaming:
            return None

        def stream() -> Generator[ChatEvent, None, None]:
            if offset is None:
                yield events.start(session_id, row.parent_id, row.id)
            yield from self.hub.tail(row.id, offset or 0, self._settle_row,
                                     self._final_of_row, detached)
        return stream()

    def stop(self, session_id: str) -> bool:
        """Stops the reply being generated in the session (in whichever process runs it)."""
        self.session(session_id)
        row = message_store.streaming_reply(self._db.conn(), session_id)
        if row is None:
            return False
        local = self.hub.local(row.id)
        if local is not None:
            local.cancel.set()
            return True
        if not message_store.request_stop(self._db.conn(), row.id):
            return False
        self.hub.ring()  # its process looks at the mark now (`process_bells.py`)
        return True

    def settle(self, session_id: str) -> None:
        """Ends replies left streaming by a process that died (kept, marked incomplete)."""
        row = message_store.streaming_reply(self._db.conn(), session_id)
        if row is not None:
            self._settle_row(row)

    def recover_orphans(self) -> int:
        """At start-up: ends every reply whose generating process is gone; returns how many."""
        settled = 0
        for row in message_store.streaming_replies(self._db.conn()):
            settled += int(self._settle_row(row) is not row)
        return settled

    def release_connection(self) -> None:
        """Hands the calling thread's SQLite connection back to the pool: a socket's thread
        waits for its next frame far longer than it uses the database."""
        self._db.close_thread()

    def close(self) -> None:
        """Stops this process's replies (shutdown)."""
        self.hub.close()

    def _launch(self, session: SessionRow, prepare: Callable[[], tuple[dict, dict]]) -> Generation:
        session_id = session.id
        if not self._leases.claim(session_id):
            raise busy()
        try:
            self.settle_claimed(session_id)
            with self._db.transaction():
                user, reply = prepare()
        except BaseException:
            self._leases.release(session_id)
            raise
        generation = Generation(session_id, user["id"], reply["id"], reply["content"],
                                session.persona_id)
        self._db.close_thread()  # the reply, started at once, takes this very connection
        self.hub.launch(generation, lambda g: self._work(g, session, user))
        return generation

    def _new_reply(self, session_id: str, parent_id: int, cause: str) -> dict:
        return message_store.add_message(self._db.conn(), session_id, "assistant", "",
                                         "incomplete", parent_id=parent_id, streaming=True,
                                         cause=cause)

    def _work(self, generation: Generation, session: SessionRow, user: dict) -> None:
        """The reply's thread: prompt, stream, store, free the session, then tell the followers.
        It keeps one SQLite connection from the prompt to the stored reply (handing it back
        while streaming made every turn reconnect once more than the pool keeps were busy),
        unless more are in use than the pool keeps (then memory wins)."""
        try:
            config, sources = self._prompt.config(session, generation.reply_id,
                                                  generation.text(), generation.parent_id)
            capture = config.on_sent = SentCapture(config)
            if self._db.crowded():  # many replies at once: each holding one costs ~1 MiB
                self._db.close_thread()

            def record(conn: sqlite3.Connection, usage: dict | None) -> None:  # in the reply's final transaction
                prompt_record.store(conn, generation.reply_id, capture, usage)

            outcome = stream_reply(self._db, self._api, generation, config, record, sources)
        except Exception:
            log.exception("Chat turn failed in session %s", session.id)
            outcome = failure_outcome(self._db, generation, "internal_error", "Something went "
                                      "wrong on the server while answering (see the server log).")
        finally:
            self._leases.release(session.id)
        generation.finish(self._final(session, user, outcome))

    def _final(self, session: SessionRow, user: dict, outcome: Outcome) -> ChatEvent:
        if outcome.error is not None:
            return events.error(outcome.error["code"], outcome.error["message"],
                                outcome.error["retryable"])
        stored = outcome.stored
        if outcome.complete and stored and self.titles is not None and not session.title:
            self.titles.schedule(session.id, user["content"], stored["content"])
        return events.done(stored["id"] if stored else None, outcome.text, outcome.usage,
                           outcome.stop_reason, self._check_cortex(session))

    def _check_cortex(self, session: SessionRow) -> dict:
        if self._trigger is None:
            return dict(NO_CORTEX)
        try:
            return self._trigger(session.persona_id, session.id) or dict(NO_CORTEX)
        except Exception:
            log.exception("Cortex trigger check failed for persona %s", session.persona_id)
            return dict(NO_CORTEX)

    def _final_of_row(self, row: Message | None) -> ChatEvent:
        """The final event of a reply that finished in another process, from its row."""
        if row is not None and row.error is not None:
            return events.error(row.error.code, row.error.message, row.error.retryable)
        if row is None:
            return events.done(None, "", {}, "cancelled", dict(NO_CORTEX))
        cortex = dict(NO_CORTEX)
        if self._status is not None:
            try:
                cortex = self._status(row.persona_id)
            except Exception:
                log.exception("Cortex status failed for persona %s", row.persona_id)
        return events.done(row.id, row.content, {}, row.stop_reason, cortex)

    def _settle_row(self, row: Message) -> Message | None:
        """`row` as is while its process streams it, else ended as interrupted."""
        if not self._leases.claim(row.session_id):
            return row
        try:
            return self._interrupt(row)
        finally:
            self._leases.release(row.session_id)

    def settle_claimed(self, session_id: str) -> None:
        """Ends orphaned replies of a session this caller has claimed."""
        row = message_store.streaming_reply(self._db.conn(), session_id)
        if row is not None:
            self._interrupt(row)

    def _interrupt(self, row: Message) -> Message | None:
        conn = self._db.conn()
        current = message_store.get_message(conn, row.id)
        if current is None or not current.streaming:
            return current
        log.warning("Reply %s was left streaming by a process that stopped", row.id)
        error = None if current.content.strip() else INTERRUPTED
        message_store.finish_reply(conn, row.id, current.content, "incomplete", "interrupted",
                                   error)
        return message_store.get_message(conn, row.id)  # finish_reply answers a dict row


def _launched(message: Message, content: str | None = None) -> dict:
    """What `_launch` reads of a message (`add_message`'s dict row has it too): its id and
    text (`content` when it changes)."""
    return {"id": message.id, "content": message.content if content is None else content}
