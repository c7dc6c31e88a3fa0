"""The request each reply was generated from (`reply_prompts`, migration 0045), and cached
provider token counts (`token_counts`). The body is split by the caller into a shared prefix
(stored once per content in `prompt_prefixes`) and the rest (zlib); `load` puts it back
together byte for byte."""
import hashlib
import json
import sqlite3
import zlib
from dataclasses import dataclass

from .clock import utc_now
from .db import savepoint, transaction

MAX_COUNTS = 50_000


@dataclass(frozen=True)
class PromptRecord:
    """One reply's recorded request."""

    message_id: int
    provider: str
    model: str
    layout: list[dict]
    body: bytes
    usage: dict | None
    created_at: str


def save(conn: sqlite3.Connection, message_id: int, provider: str, model: str,
         layout: list[dict], body: bytes, prefix: tuple[int, int] | None,
         usage: dict | None) -> None:
    """Stores (or replaces: a continued reply is sent again) the request of reply `message_id`;
    `prefix` is the byte span kept once per content (None: nothing shared)."""
    start, end = prefix or (0, 0)
    shared = body[start:end]
    digest = hashlib.sha256(shared).hexdigest() if shared else None
    rest = zlib.compress(body[:start] + body[end:], 1)  # fastest level: it runs every turn
    values = (provider, model, json.dumps(layout), digest, start, rest,
              json.dumps(usage) if usage else None, utc_now(), message_id)
    with transaction(conn):  # joins the reply's final transaction (one write per turn)
        # The usual turn: a new reply whose prefix is stored already (every turn of a persona
        # until its memory changes). One statement, so no savepoint (it stores all or
        # nothing), and the prefix's bytes are not sent again; the prefix is looked up in this
        # write transaction, so one that went with its last reply is never referenced.
        if conn.execute(_INSERT_KNOWN, (*values, digest, digest)).rowcount:
            return
        # Else (a new prefix, or a continued reply recorded before) a savepoint, so a failed
        # record never undoes the stored reply. The old row first: its trigger may drop a
        # prefix this one shares.
        with savepoint(conn, "prompt_record"):
            conn.execute("DELETE FROM reply_prompts WHERE message_id = ?", (message_id,))
            if digest is not None:
                conn.execute("INSERT OR IGNORE INTO prompt_prefixes (hash, bytes) "
                             "VALUES (?, ?)", (digest, shared))
            stored = conn.execute(_INSERT, values).rowcount
            if not stored and digest is not None:  # the reply went meanwhile: no orphan prefix
                conn.execute("DELETE FROM prompt_prefixes WHERE hash = ? AND NOT EXISTS "
                             "(SELECT 1 FROM reply_prompts WHERE prefix_hash = ?)",
                             (digest, digest))


_RECORD = ("reply_prompts (message_id, provider, model, layout, prefix_hash, prefix_at, rest, "
           "usage, created_at) SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM messages WHERE id = ?")
_INSERT = f"INSERT INTO {_RECORD}"
# Only when its prefix (if any) exists; a reply recorded before is left for the long way.
_INSERT_KNOWN = (f"INSERT OR IGNORE INTO {_RECORD} AND (? IS NULL OR EXISTS "
                 "(SELECT 1 FROM prompt_prefixes WHERE hash = ?))")


def load(conn: sqlite3.Connection, message_id: int) -> PromptRecord | None:
    """The recorded request of a reply, or None (not recorded)."""
    row = conn.execute(
        "SELECT r.message_id, r.provider, r.model, r.layout, r.prefix_at, r.rest, r.usage, "
        "r.created_at, p.bytes AS prefix FROM reply_prompts r "
        "LEFT JOIN prompt_prefixes p ON p.hash = r.prefix_hash WHERE r.message_id = ?",
        (message_id,)).fetchone()
    if row is None:
        return None
    rest = zlib.decompress(row["rest"])
    at = row["prefix_at"]
    body = rest[:at] + (row["prefix"] or b"") + rest[at:]
    return PromptRecord(row["message_id"], row["provider"], row["model"],
                        json.loads(row["layout"]), body,
                        json.loads(row["usage"]) if row["usage"] else None, row["created_at"])


def latest_of_session(conn: sqlite3.Connection, session_id: str) -> int | None:
    """The newest reply on the session's active branch that has a recorded request."""
    row = conn.execute(
        "SELECT r.message_id FROM reply_prompts r JOIN messages m ON m.id = r.message_id "
        "WHERE m.session_id = ? AND m.on_branch = 1 ORDER BY r.message_id DESC LIMIT 1",
        (session_id,)).fetchone()
    return row["message_id"] if row else None


def set_usage(conn: sqlite3.Connection, message_id: int, usage: dict | None) -> None:
    """The usage the reply's stream reported (message_start / message_delta, or the
    OpenAI-compatible final chunk)."""
    if usage:
        with transaction(conn):
            conn.execute("UPDATE reply_prompts SET usage = ? WHERE message_id = ?",
                         (json.dumps(usage), message_id))


def cached_counts(conn: sqlite3.Connection, keys: list[str]) -> dict[str, int]:
    """The stored counts among `keys`."""
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    return {row["key"]: row["tokens"] for row in conn.execute(
        f"SELECT key, tokens FROM token_counts WHERE key IN ({marks})", keys)}


def store_counts(conn: sqlite3.Connection, counts: dict[str, int],
                 keep: int = MAX_COUNTS) -> None:
    """Keeps provider counts for later openings; past `keep` rows the oldest go (a count is
    cheap to ask again)."""
    if not counts:
        return
    now = utc_now()
    with transaction(conn):
        conn.executemany("INSERT OR REPLACE INTO token_counts (key, tokens, created_at) "
                         "VALUES (?, ?, ?)", [(key, n, now) for key, n in counts.items()])
        conn.execute("DELETE FROM token_counts WHERE key IN (SELECT key FROM token_counts "
                     "ORDER BY rowid DESC LIMIT -1 OFFSET ?)", (keep,))
