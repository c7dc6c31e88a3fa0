"""A persona's history as rows, for its portable archive (portability/archive.py): read in one
read transaction, and inserted under new ids in the import's transaction.

Both yield to the worker's other connections every YIELD_EVERY rows: a long history takes a
while to read or insert even without packing it.
"""
import hashlib
import sqlite3
from collections.abc import Callable
from typing import Any

from ..cooperative import pause
from .cortex_jobs import last_processed_id

YIELD_EVERY = 500  # rows read or inserted between two cooperative yields (in one transaction)


def read_history(conn: sqlite3.Connection, persona_id: str) -> dict[str, Any]:
    """`{sessions, messages, revisions, last_processed_id}` of the persona (committed
    revisions only), each row a dict (call inside one read transaction)."""
    return {
        "sessions": _rows(conn, "SELECT id, title, greeting_index, created_at, updated_at "
                          "FROM sessions WHERE persona_id = ? ORDER BY rowid", persona_id),
        "messages": _rows(conn, "SELECT id, session_id, role, content, status, created_at "
                          "FROM messages WHERE persona_id = ? ORDER BY id", persona_id),
        "revisions": _rows(conn, "SELECT id, filename, author, content, created_at, "
                           "message_from, message_to, summary FROM cortex_revisions "
                           "WHERE persona_id = ? AND committed = 1 ORDER BY id", persona_id),
        "last_processed_id": last_processed_id(conn, persona_id),
    }


def insert_history(conn: sqlite3.Connection, new_persona_id: str, parsed: dict[str, Any],
                   new_session_id: Callable[[], str]) -> dict[str, Any]:
    """Inserts sessions, messages, revisions and state under new ids; returns the cortex files
    (`{filename: content}` of each file's newest revision)."""
    sessions = {}
    for session in parsed["sessions"]:
        sessions[session["id"]] = sid = new_session_id()
        conn.execute("INSERT INTO sessions (id, persona_id, title, greeting_index, created_at, "
                     "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (sid, new_persona_id, session["title"], session.get("greeting_index", 0),
                      session["created_at"], session["updated_at"]))
    messages: dict[int, int] = {}
    for index, message in enumerate(parsed["messages"], 1):
        if index % YIELD_EVERY == 0:
            pause(0)  # a long history: let the worker's other connections run between rows
        cursor = conn.execute(
            "INSERT INTO messages (session_id, persona_id, role, content, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (sessions[message["session_id"]], new_persona_id, message["role"],
             message["content"], message["status"], message["created_at"]))
        assert cursor.lastrowid is not None  # set by the INSERT
        messages[message["id"]] = cursor.lastrowid
    latest = {}
    for rev in parsed["revisions"]:
        conn.execute(
            "INSERT INTO cortex_revisions (persona_id, filename, author, content, sha256, chars, "
            "created_at, message_from, message_to, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (new_persona_id, rev["filename"], rev["author"], rev["content"],
             hashlib.sha256(rev["content"].encode("utf-8")).hexdigest(), len(rev["content"]),
             rev["created_at"], messages.get(rev.get("message_from")),
             messages.get(rev.get("message_to")), rev.get("summary") or ""))
        latest[rev["filename"]] = rev["content"]
    done = [new for old, new in messages.items()
            if old <= (parsed["state"].get("last_processed_id") or 0)]
    if done:
        conn.execute("INSERT INTO cortex_state (persona_id, last_processed_id, updated_at) "
                     "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                     (new_persona_id, max(done)))
    return latest


def _rows(conn: sqlite3.Connection, sql: str, persona_id: str) -> list[dict[str, Any]]:
    """The query's rows as dicts, yielding to the worker's other connections every
    YIELD_EVERY rows (a long history takes a while to read even without packing it)."""
    cursor = conn.execute(sql, (persona_id,))
    found: list[dict[str, Any]] = []
    while batch := cursor.fetchmany(YIELD_EVERY):
        found.extend(dict(row) for row in batch)
        pause(0)
    return found
