"""Tombstones of persona deletions in progress, and persona ids the database knows but lost."""
import sqlite3

from .clock import utc_now


def record(conn: sqlite3.Connection, persona_id: str) -> None:
    """Notes that `persona_id` is being deleted (in the transaction that deletes its row)."""
    conn.execute("INSERT OR REPLACE INTO persona_deletions (persona_id, requested_at) "
                 "VALUES (?, ?)", (persona_id, utc_now()))


def clear(conn: sqlite3.Connection, persona_id: str) -> None:
    """Forgets the tombstone once everything of the persona is gone."""
    conn.execute("DELETE FROM persona_deletions WHERE persona_id = ?", (persona_id,))


def pending(conn: sqlite3.Connection) -> list[str]:
    """Ids whose deletion started but did not finish (a crash, or a directory that resisted)."""
    rows = conn.execute("SELECT persona_id FROM persona_deletions ORDER BY requested_at")
    return [row[0] for row in rows]


def is_pending(conn: sqlite3.Connection, persona_id: str) -> bool:
    """True while `persona_id` has a tombstone."""
    return conn.execute("SELECT 1 FROM persona_deletions WHERE persona_id = ?",
                        (persona_id,)).fetchone() is not None


def ids_with_orphaned_revisions(conn: sqlite3.Connection) -> list[str]:
    """Persona ids with cortex revisions but no persona row ('default' always has a row)."""
    rows = conn.execute("SELECT DISTINCT persona_id FROM cortex_revisions WHERE persona_id <> "
                        "'default' AND persona_id NOT IN (SELECT id FROM personas)")
    return [row[0] for row in rows]
