"""Anchoring in SQLite (table `cortex_revision_sources`, migration 0035).

Each revision a run makes records the messages it came from: their ids, sessions and a hash of
each message's text when it was processed (kind `derived`), or, for a reconciliation, the
messages whose retraction it handles (kind `retracted`). Reconciliation reads the `derived` rows
to find what a retracted message left in memory; the history shows both as the revision's
`source`. The rows are written with the revision's pending row (step 1 of an apply), so they
exist exactly when the revision does.
"""
import hashlib
import sqlite3
from collections.abc import Iterable

from ..models.cortex import RevisionSource

KINDS = ("derived", "retracted")


def content_hash(text: str) -> str:
    """Hex SHA-256 of a message's text (as `message_changes.content_sha256` hashes it)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_of(message: dict) -> dict:
    """The anchor of one message: `{message_id, session_id, content_sha256}`."""
    return {"message_id": message["id"], "session_id": message["session_id"],
            "content_sha256": content_hash(message["content"])}


def add_sources(conn: sqlite3.Connection, revision_id: int, sources: Iterable[dict],
                kind: str) -> None:
    """Links a revision to the messages it came from (inside the caller's transaction)."""
    if kind not in KINDS:
        raise ValueError(f"unknown source kind {kind!r}")
    conn.executemany(
        "INSERT OR IGNORE INTO cortex_revision_sources (revision_id, message_id, session_id, "
        "content_sha256, kind) VALUES (?, ?, ?, ?, ?)",
        [(revision_id, s["message_id"], s["session_id"], s["content_sha256"], kind)
         for s in sources])


def sources_by_revision(conn: sqlite3.Connection,
                        revision_ids: Iterable[int]) -> dict[int, RevisionSource]:
    """`{revision_id: source}`, each `{kind, session_id, message_ids, sessions: [{session_id,
    message_ids}]}`, for the revisions that have one."""
    ids = list(revision_ids)
    found: dict[int, dict] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
                "SELECT revision_id, message_id, session_id, kind FROM cortex_revision_sources "
                f"WHERE revision_id IN ({marks}) ORDER BY revision_id, message_id", chunk):
            entry = found.setdefault(row["revision_id"], {"kind": row["kind"], "rows": []})
            entry["rows"].append((row["session_id"], row["message_id"]))
    return {rev: _shape(entry) for rev, entry in found.items()}


def derived_messages(conn: sqlite3.Connection, revision_id: int) -> set[int]:
    """The ids of the messages a revision was derived from."""
    return {row[0] for row in conn.execute(
        "SELECT message_id FROM cortex_revision_sources WHERE revision_id = ? AND "
        "kind = 'derived'", (revision_id,))}


def revisions_of_message(conn: sqlite3.Connection, message_id: int) -> list[dict]:
    """The committed revisions anchored to a message: `[{filename, rev, kind, author}]`."""
    rows = conn.execute(
        "SELECT r.id, r.filename, r.author, s.kind FROM cortex_revision_sources s "
        "JOIN cortex_revisions r ON r.id = s.revision_id WHERE s.message_id = ? AND "
        "r.committed = 1 ORDER BY r.id", (message_id,)).fetchall()
    return [{"filename": r["filename"], "rev": r["id"], "kind": r["kind"],
             "author": r["author"]} for r in rows]


def is_anchored(conn: sqlite3.Connection, message_id: int) -> bool:
    """True when some revision was derived from the message (memory learned from it)."""
    return conn.execute("SELECT 1 FROM cortex_revision_sources WHERE message_id = ? AND "
                        "kind = 'derived' LIMIT 1", (message_id,)).fetchone() is not None


def _shape(entry: dict) -> RevisionSource:
    sessions: dict[str, list[int]] = {}
    for session_id, message_id in entry["rows"]:
        sessions.setdefault(session_id, []).append(message_id)
    last_session = max(entry["rows"], key=lambda pair: pair[1])[0]
    return RevisionSource.model_validate({
        "kind": entry["kind"], "session_id": last_session,
        "message_ids": sorted(m for _, m in entry["rows"]),
        "sessions": [{"session_id": sid, "message_ids": ids} for sid, ids in sessions.items()]})
