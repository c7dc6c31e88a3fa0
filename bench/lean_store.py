"""The lean server's storage (bench/lean_server.py): its own one table (`PlainStore`), or the
app's database doing the app's SQL and nothing else (`AppStore`).

A turn is `start` (the person's message and the empty reply stored, the history read back for
the prompt) and `finish` (the final text stored). `AppStore` is the second floor (issue #23):
the database is created and migrated by the app (`storage.Database`: the app's connections,
PRAGMAs and migrations, FTS triggers and indexes included), each session has its persona, and
each turn runs the statements of a steady app turn, in its order, through the same storage
functions: the session row and the orphan check (`chat_tree.session`, `settle_claimed`), the
start transaction (`messages.add_exchange`), the change counters and the history
(`chat_prompt`; the request's endpoint comes from the settings the prompt kept, so no settings
row is read before it), the final transaction (`messages.finish_reply` and the prompt inspector's record,
`prompt_record.store`) and the cortex trigger's one statement (`cortex_input.trigger_state`).
No followers, leases, events, titles, caches or cortex files. tests/chat/test_floor_statements.py
keeps its statements equal to an app turn's.

Two variants of it are floors for storing the same rows in fewer commits (bench/store_cpu.py
`--stores`; tests/chat/test_floor_variants.py checks they leave the rows `AppStore` leaves):
`MergedStore` runs the start's reads inside its write transaction and the trigger's read inside
the final one (two transactions a turn instead of seven), `GroupedStore` commits the final
writes of the turns that end together in one transaction (a group commit: each page those
turns share is written to the WAL once).
"""
from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from src.utils.api_request.types import RequestConfig, SentRequest, SystemBlock
from src.utils.services import prompt_record
from src.utils.storage import (
    Database,
    cortex_input,
    generations,
    messages,
    personas,
    sessions,
    settings_store,
)

HISTORY = 40
SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT NOT NULL, streaming INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, id);
"""
# What an app reply's prompt held (`finish_reply`'s sources): a persona's three cortex files
# as seeded, no world info fired.
REVISIONS = {"memory.md": 1, "soul.md": 2, "relationship.md": 3}


@dataclass
class Opened:
    """A turn between its start and its finish."""

    session_id: str
    user_id: int
    reply_id: int
    history: list[dict]
    conn: Any = None
    persona_id: str = ""


class PlainStore:
    """One table with one index in SQLite WAL; a few connections reused by the turns."""

    records = False  # whether `finish` wants the request's body

    def __init__(self, path: str):
        self.path = path
        self.idle: list[sqlite3.Connection] = []
        conn = self._take()
        conn.executescript(SCHEMA)
        self.idle.append(conn)

    def _take(self) -> sqlite3.Connection:
        if self.idle:
            return self.idle.pop()
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    def start(self, key: str, text: str) -> Opened:
        """Stores the message and an empty reply; reads the newest `HISTORY` messages."""
        conn = self._take()
        try:
            conn.execute("BEGIN IMMEDIATE")
            user = conn.execute("INSERT INTO messages (session_id, role, content) "
                                "VALUES (?, 'user', ?)", (key, text)).lastrowid
            reply = conn.execute("INSERT INTO messages (session_id, role, content, streaming) "
                                 "VALUES (?, 'assistant', '', 1)", (key,)).lastrowid
            conn.execute("COMMIT")
            rows = conn.execute("SELECT role, content FROM messages WHERE session_id = ? "
                                "AND streaming = 0 ORDER BY id DESC LIMIT ?",
                                (key, HISTORY)).fetchall()
        finally:
            self.idle.append(conn)
        history = [{"role": role, "content": content} for role, content in reversed(rows)]
        while history and history[0]["role"] != "user":
            history.pop(0)
        assert user is not None and reply is not None
        return Opened(key, user, reply, history)

    def finish(self, turn: Opened, text: str, sent: SentRequest | None, usage: dict | None,
               system: list[dict]) -> None:
        """Stores the reply's final text."""
        conn = self._take()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE messages SET content = ?, streaming = 0 WHERE id = ?",
                         (text, turn.reply_id))
            conn.execute("COMMIT")
        finally:
            self.idle.append(conn)


class AppStore:
    """The app's database and SQL for the same turn (module docstring). Like the app under
    gevent, each turn's greenlet holds one of the app's pooled connections from its start to
    its end."""

    records = True

    def __init__(self, path: str):
        self.db = Database(path)
        self.db.open()
        self.sessions: dict[str, tuple[str, str]] = {}  # key: (session id, persona id)
        conn = self.db.conn()
        self.limit = settings_store.context_limit_of(settings_store.app_text(conn))
        self.db.close_thread()

    def session(self, key: str) -> tuple[str, str]:
        """The session (and its persona) standing for the client's `key`, created at its first
        turn; the ids are the key's, so every process serving the database finds the same."""
        found = self.sessions.get(key)
        if found is None:
            persona_id, session_id = f"lean{key:0>8}", f"lean{key:0>12}"
            with self.db.transaction() as conn:
                if sessions.get_session_row(conn, session_id) is None:
                    personas.create_persona(conn, persona_id, {"name": f"Lean {key}"})
                    sessions.create_session(conn, session_id, persona_id, title="Lean")
            found = self.sessions[key] = (session_id, persona_id)
        return found

    def start(self, key: str, text: str) -> Opened:
        """The session read and the orphan check, the start transaction, the counters and the
        history for the prompt, as an app turn runs them."""
        session_id, persona_id = self.session(key)
        conn = self.db.conn()
        with self._reads_around():
            row = sessions.get_session_row(conn, session_id)
            assert row is not None
            messages.streaming_reply(conn, session_id)
            with self.db.transaction():  # joins the one `_reads_around` opened, if any
                user, reply = messages.add_exchange(conn, session_id, text)
            generations.read(conn)
            history = messages.history_for_prompt(conn, session_id, self.limit, user["id"])
        return Opened(session_id, user["id"], reply["id"], [m.turn() for m in history], conn,
                      persona_id)

    def finish(self, turn: Opened, text: str, sent: SentRequest | None, usage: dict | None,
               system: list[dict]) -> None:
        """The final transaction (the reply's text and its prompt record of `sent`, whose
        system blocks were `system`) and the cortex trigger's check."""
        conn = turn.conn
        try:
            with self._reads_around():
                with self.db.transaction():
                    _final_writes(conn, turn, text, sent, usage, system)
                cortex_input.trigger_state(conn, turn.persona_id)
        finally:
            self.db.close_thread()

    def _reads_around(self) -> AbstractContextManager[Any]:
        """What a turn's reads run in besides its write transactions: nothing (autocommit),
        as in the app."""
        return nullcontext()


def _capture(sent: SentRequest, system: list[dict]) -> prompt_record.SentCapture:
    """What the app's reply hands `prompt_record.store`: the body sent and the layout of its
    system blocks (the first one, persona and cortex, is the prefix stored once)."""
    blocks = [SystemBlock(block["text"], cache="cache_control" in block,
                          label="persona" if i == 0 else "time")
              for i, block in enumerate(system)]
    capture = prompt_record.SentCapture(RequestConfig(system_prompt=blocks, messages=[]))
    capture(sent)
    return capture


class MergedStore(AppStore):
    """`AppStore`'s statements in two transactions a turn: the session read, the orphan check,
    the counters and the history inside the start's write transaction, the cortex trigger's
    read inside the final one (each transaction begun after another connection committed
    reads its pages afresh)."""

    def _reads_around(self) -> AbstractContextManager[Any]:
        return self.db.transaction()


class GroupedStore(AppStore):
    """`AppStore` whose final transactions are grouped: the first turn to finish yields once,
    so the turns ending in the same moment queue behind it, then commits every queued turn's
    final writes (and reads each trigger count) in one transaction; the others wait for it."""

    def __init__(self, path: str, gather: Callable[[], object] = lambda: time.sleep(0)):
        super().__init__(path)
        self._queue: list[tuple[Opened, str, SentRequest | None, dict | None, list[dict],
                                threading.Event]] = []
        self._lock = threading.Lock()
        self._gather = gather  # what the first turn to finish does before it commits
        self._failed: dict[int, Exception] = {}  # a waiting turn's group failed with this

    def queued(self) -> int:
        """Turns waiting for the next group's commit (the tests' `gather` looks)."""
        with self._lock:
            return len(self._queue)

    def finish(self, turn: Opened, text: str, sent: SentRequest | None, usage: dict | None,
               system: list[dict]) -> None:
        """Queues the turn's final writes; the first turn queued commits the group, the others
        wait for that commit and raise what failed it."""
        done = threading.Event()
        with self._lock:
            self._queue.append((turn, text, sent, usage, system, done))
            lead = len(self._queue) == 1
        try:
            if not lead:
                done.wait()
                if self._failed.get(id(done)) is not None:
                    raise self._failed.pop(id(done))
                return
            self._gather()  # under gevent, a yield: the turns ready now queue up first
            with self._lock:
                batch, self._queue = self._queue, []
            self._commit(batch)
        finally:
            self.db.close_thread()

    def _commit(self, batch: list) -> None:
        """One transaction for the batch; every waiting turn is released, also when it fails."""
        conn = self.db.conn()  # the leader's own, unless it started on another thread
        try:
            with self.db.transaction():
                for each in batch:
                    _final_writes(conn, *each[:5])
                    cortex_input.trigger_state(conn, each[0].persona_id)
        except Exception as err:
            for each in batch[1:]:
                self._failed[id(each[5])] = err
            raise
        finally:
            for each in batch:
                each[5].set()


def _final_writes(conn: sqlite3.Connection, turn: Opened, text: str, sent: SentRequest | None,
                  usage: dict | None, system: list[dict]) -> None:
    """A turn's final writes (the reply's text, its prompt record), in the caller's transaction
    on `conn`."""
    stored = messages.finish_reply(conn, turn.reply_id, text, "complete", "end_turn", None,
                                   (REVISIONS, []))
    if stored is not None and sent is not None:
        prompt_record.store(conn, turn.reply_id, _capture(sent, system), usage)
