"""What left the conversation, as memory reconciliation reads it (`message_changes`, 0015/0035).

The conversation tree logs every message that leaves the active branch (edited, regenerated,
deleted, abandoned by a branch switch, or its session deleted) as `retracted`. Only retractions
of messages memory learned from matter (anchored in `cortex_revision_sources`, or inside the
range of the update running now or of a pending proposal, or among the anchors of a pending
proposal without a range); the rest need nothing, because the
next update reads the conversation as it now stands. A reconciliation marks every row it saw
handled in the transaction that applies its result, and erases a deleted message's kept text.
"""
import sqlite3
from collections.abc import Iterable
from typing import Any

from .clock import utc_now
from .db import transaction

_COLUMNS = ("id, persona_id, session_id, message_id, change, cause, replaced_by, "
            "content_sha256, content, created_at")
_LEARNED = (
    "(EXISTS (SELECT 1 FROM cortex_revision_sources s WHERE s.message_id = c.message_id "
    "AND s.kind = 'derived') "
    "OR EXISTS (SELECT 1 FROM cortex_jobs j WHERE j.persona_id = c.persona_id "
    "AND j.status = 'running' AND c.message_id BETWEEN j.message_from AND j.message_to) "
    "OR EXISTS (SELECT 1 FROM cortex_proposals p WHERE p.persona_id = c.persona_id "
    "AND p.status = 'pending' AND c.message_id BETWEEN p.message_from AND p.message_to) "
    # a proposal without a range (a learn run's) names its messages in its anchors
    "OR EXISTS (SELECT 1 FROM cortex_proposals p, json_each(p.sources) a "
    "WHERE p.persona_id = c.persona_id AND p.status = 'pending' AND p.message_from IS NULL "
    "AND json_extract(a.value, '$.message_id') = c.message_id))")
_RELEVANT = (
    "c.persona_id = ? AND c.handled_at IS NULL AND c.change = 'retracted' "
    "AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = c.message_id AND m.on_branch = 1) "
    f"AND {_LEARNED}")


def needs_reconciliation(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True when a message memory learned from (or is learning from) left the conversation
    and no reconciliation has handled it yet."""
    return conn.execute(f"SELECT 1 FROM message_changes c WHERE {_RELEVANT} LIMIT 1",
                        (persona_id,)).fetchone() is not None


def personas_waiting(conn: sqlite3.Connection) -> list[str]:
    """Personas with a retraction that needs reconciling (for the periodic scan); rows that
    need none are settled on the way."""
    rows = conn.execute("SELECT DISTINCT persona_id FROM message_changes "
                        "WHERE handled_at IS NULL").fetchall()
    waiting = []
    for (persona_id,) in rows:
        with transaction(conn):
            settle_unneeded(conn, persona_id)
        if needs_reconciliation(conn, persona_id):
            waiting.append(persona_id)
    return waiting


def unhandled(conn: sqlite3.Connection, persona_id: str) -> list[dict[str, Any]]:
    """Every row of the persona no reconciliation has handled yet, oldest first."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM message_changes WHERE persona_id = ? AND "
                        "handled_at IS NULL ORDER BY id", (persona_id,)).fetchall()
    return [dict(row) for row in rows]


def off_branch(conn: sqlite3.Connection, message_ids: Iterable[int]) -> set[int]:
    """Those of `message_ids` that are no longer on an active branch (or no longer exist)."""
    ids = sorted(set(message_ids))
    alive: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        alive |= {row[0] for row in conn.execute(
            f"SELECT id FROM messages WHERE id IN ({marks}) AND on_branch = 1", chunk)}
    return set(ids) - alive


def message_texts(conn: sqlite3.Connection,
                  message_ids: Iterable[int | None]) -> dict[int, dict[str, Any]]:
    """`{id: {role, content, created_at, session_id}}` of the messages that still exist."""
    ids = sorted({i for i in message_ids if i is not None})
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, role, content, created_at, session_id, status, streaming "
                        f"FROM messages WHERE id IN ({marks})", ids).fetchall()
    return {row["id"]: dict(row) for row in rows}


def settle_unneeded(conn: sqlite3.Connection, persona_id: str) -> int:
    """Rows of messages memory never learned from need no reconciliation: their kept text is
    erased at once, and they are marked handled unless an update is running (it may be reading
    them; call inside a write transaction, so none can start meanwhile). Returns how many rows
    were marked handled."""
    unneeded = ("SELECT c.id FROM message_changes c WHERE c.persona_id = ? AND "
                f"c.handled_at IS NULL AND NOT {_LEARNED}")
    conn.execute(f"UPDATE message_changes SET content = NULL WHERE content IS NOT NULL AND "
                 f"id IN ({unneeded})", (persona_id,))
    if conn.execute("SELECT 1 FROM cortex_jobs WHERE persona_id = ? AND status = 'running'",
                    (persona_id,)).fetchone():
        return 0
    return conn.execute(f"UPDATE message_changes SET handled_at = ? WHERE id IN ({unneeded})",
                        (utc_now(), persona_id)).rowcount


def mark_handled(conn: sqlite3.Connection, change_ids: Iterable[int]) -> None:
    """Marks rows handled and erases the kept text of deleted messages (in the caller's
    transaction)."""
    ids = list(change_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"UPDATE message_changes SET handled_at = ?, content = NULL "
                     f"WHERE id IN ({marks}) AND handled_at IS NULL", (utc_now(), *chunk))
