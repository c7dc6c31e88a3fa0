"""Message search (FTS5). A person's words become quoted prefix terms, so no input can be read
as FTS5 query syntax; snippets mark hits with control characters, which become the result's
plain `snippet` and its `highlights` ranges here.

New and edited messages wait in `messages_fts_pending` (migration 0048) and are indexed in
batches: a turn's end indexes them once `PENDING_BATCH` wait (`keep_up`), an import indexes its
own, and a search indexes whatever waits before it reads, so it never misses a message.
"""
import re
import sqlite3

from ..cooperative import pause
from ..models.search import SearchResult
from .db import transaction

HIT_START, HIT_END = "\x02", "\x03"
_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str, max_terms: int = 12) -> str:
    """`cat pix` → `"cat"* "pix"*` (all words, each as a prefix); '' when there are no words."""
    words = _WORD.findall(text)[:max_terms]
    return " ".join(f'"{word}"*' for word in words)


PENDING_BATCH = 32  # waiting messages a turn's end indexes together
_CHUNK = 500  # waiting messages indexed between two pauses of a long catch-up
_WAITING = "SELECT id FROM messages_fts_pending ORDER BY id LIMIT ?"


def keep_up(conn: sqlite3.Connection) -> None:
    """In the caller's write transaction: indexes the waiting messages once `PENDING_BATCH`
    wait (a turn's end calls it, so the index never lags far behind)."""
    waiting = conn.execute("SELECT COUNT(*) FROM (SELECT 1 FROM messages_fts_pending LIMIT ?)",
                           (PENDING_BATCH,)).fetchone()[0]
    if waiting >= PENDING_BATCH:
        index_waiting(conn)


def index_waiting(conn: sqlite3.Connection) -> None:
    """In the caller's write transaction: indexes every waiting message, `_CHUNK` at a time
    with a cooperative pause between (an import leaves tens of thousands)."""
    while True:
        conn.execute("INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages "
                     f"WHERE id IN ({_WAITING})", (_CHUNK,))
        conn.execute(f"DELETE FROM messages_fts_pending WHERE id IN ({_WAITING})", (_CHUNK,))
        if conn.execute("SELECT 1 FROM messages_fts_pending LIMIT 1").fetchone() is None:
            return
        pause(0)


def search_messages(conn: sqlite3.Connection, persona_id: str, query: str,
                    limit: int = 50) -> list[SearchResult]:
    """The persona's messages on active branches matching `query` (an fts_query), best first;
    the waiting messages are indexed first."""
    if conn.execute("SELECT 1 FROM messages_fts_pending LIMIT 1").fetchone() is not None:
        with transaction(conn):
            index_waiting(conn)
    rows = conn.execute(
        "SELECT m.id AS message_id, m.session_id, m.role, m.created_at, s.title AS session_title, "
        f"snippet(messages_fts, 0, '{HIT_START}', '{HIT_END}', '…', 16) AS marked "
        "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
        "JOIN sessions s ON s.id = m.session_id "
        "WHERE messages_fts MATCH ? AND m.persona_id = ? AND m.on_branch = 1 "
        "ORDER BY bm25(messages_fts), m.id DESC LIMIT ?",
        (query, persona_id, limit)).fetchall()
    return [_result(row) for row in rows]


def _result(row: sqlite3.Row) -> SearchResult:
    snippet, highlights = _highlighted(row["marked"] or "")
    return SearchResult.model_validate({
        "session_id": row["session_id"], "message_id": row["message_id"], "role": row["role"],
        "created_at": row["created_at"], "session_title": row["session_title"],
        "snippet": snippet, "highlights": highlights})


def _highlighted(marked: str) -> tuple[str, list[list[int]]]:
    """Removes the hit markers; returns the plain snippet and the [start, end) of each hit."""
    text: list[str] = []
    ranges: list[list[int]] = []
    start: int | None = None
    for ch in marked:
        if ch == HIT_START:
            start = len(text)
        elif ch == HIT_END and start is not None:
            ranges.append([start, len(text)])
            start = None
        else:
            text.append(ch)
    return "".join(text), ranges
