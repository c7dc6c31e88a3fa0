"""What left the conversation, as memory reconciliation reads it (`message_changes`, 0015/0035).

The conversation tree logs every message that leaves the active branch (edited, regenerated,
deleted, abandoned by a branch switch, or its session deleted) as `retracted`. Only retractions
of messages memory learned from matter (anchored in `cortex_revision_sources`, or inside the
range of the update running now or of a pending proposal); the rest need nothing, because the
next update reads the conversation as it now stands. A reconciliation marks every row it saw
handled in the transaction that applies its result, and erases a deleted message's kept text.
"""
import sqlite3

from ..storage.clock import utc_now

_COLUMNS = ("id, persona_id, session_id, message_id, change, cause, replaced_by, "
            "content_sha256, content, created_at")
_LEARNED = (
    "(EXISTS (SELECT 1 FROM cortex_revision_sources s WHERE s.message_id = c.message_id "
    "AND s.kind = 'derived') "
    "OR EXISTS (SELECT 1 FROM cortex_jobs j WHERE j.persona_id = c.persona_id "
    "AND j.status = 'running' AND c.message_id BETWEEN j.message_from AND j.message_to) "
    "OR EXISTS (SELECT 1 FROM cortex_proposals p WHERE p.persona_id = c.persona_id "
    "AND p.status = 'pending' AND c.message_id BETWEEN p.message_from AND p.message_to))")
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
    """Personas with a retraction that needs reconciling (for the periodic scan)."""
    rows = conn.execute("SELECT DISTINCT persona_id FROM message_changes "
                        "WHERE handled_at IS NULL AND change = 'retracted'").fetchall()
    return [row[0] for row in rows if needs_reconciliation(conn, row[0])]


def unhandled(conn: sqlite3.Connection, persona_id: str) -> list[dict]:
    """Every row of the persona no reconciliation has handled yet, oldest first."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM message_changes WHERE persona_id = ? AND "
                        "handled_at IS NULL ORDER BY id", (persona_id,)).fetchall()
    return [dict(row) for row in rows]


def off_branch(conn: sqlite3.Connection, message_ids) -> set[int]:
    """Those of `message_ids` that are no longer on an active branch (or no longer exist)."""
    ids = sorted(set(message_ids))
    alive: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        alive |= {row[0] for row in conn.execute(
            f"SELECT id FROM messages WHERE id IN ({marks}) AND on_branch = 1", chunk)}
    return set(ids) - alive


def message_texts(conn: sqlite3.Connection, message_ids) -> dict[int, dict]:
    """`{id: {role, content, created_at, session_id}}` of the messages that still exist."""
    ids = sorted(set(i for i in message_ids if i is not None))
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT id, role, content, created_at, session_id, status, streaming "
                        f"FROM messages WHERE id IN ({marks})", ids).fetchall()
    return {row["id"]: dict(row) for row in rows}


def forget_unneeded_text(conn: sqlite3.Connection, persona_id: str) -> int:
    """Erases the kept text of deleted messages memory never learned from (no reconciliation
    will need it); returns how many."""
    return conn.execute(
        "UPDATE message_changes SET content = NULL WHERE id IN (SELECT c.id FROM message_changes c "
        "WHERE c.persona_id = ? AND c.handled_at IS NULL AND c.content IS NOT NULL "
        f"AND NOT {_LEARNED})", (persona_id,)).rowcount


def mark_handled(conn: sqlite3.Connection, change_ids) -> None:
    """Marks rows handled and erases the kept text of deleted messages (in the caller's
    transaction)."""
    ids = list(change_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"UPDATE message_changes SET handled_at = ?, content = NULL "
                     f"WHERE id IN ({marks}) AND handled_at IS NULL", (utc_now(), *chunk))
