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
"""
from __future__ import annotations

import sqlite3
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
        row = sessions.get_session_row(conn, session_id)
        assert row is not None
        messages.streaming_reply(conn, session_id)
        with self.db.transaction():
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
            with self.db.transaction():
                stored = messages.finish_reply(conn, turn.reply_id, text, "complete",
                                               "end_turn", None, (REVISIONS, []))
                if stored is not None and sent is not None:
                    prompt_record.store(conn, turn.reply_id, _capture(sent, system), usage)
            cortex_input.trigger_state(conn, turn.persona_id)
        finally:
            self.db.close_thread()


def _capture(sent: SentRequest, system: list[dict]) -> prompt_record.SentCapture:
    """What the app's reply hands `prompt_record.store`: the body sent and the layout of its
    system blocks (the first one, persona and cortex, is the prefix stored once)."""
    blocks = [SystemBlock(block["text"], cache="cache_control" in block,
                          label="persona" if i == 0 else "time")
              for i, block in enumerate(system)]
    capture = prompt_record.SentCapture(RequestConfig(system_prompt=blocks, messages=[]))
    capture(sent)
    return capture
