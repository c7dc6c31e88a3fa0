"""Groups of staged edits being applied (table `cortex_changesets`): the intent of step 1.

A row exists from the transaction that writes a group's pending revisions until the one that
commits them (see cortex/staged_apply.py); a row left behind is a group a crash interrupted.
"""
import sqlite3
from typing import Any

from .clock import utc_now


def insert_changeset(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """Records a group's intent (inside the transaction that writes its pending revisions)."""
    conn.execute("INSERT INTO cortex_changesets (id, persona_id, job_id, revisions, message_to, "
                 "outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (row["id"], row["persona_id"], row["job_id"], row["revisions"],
                  row["message_to"], row["outcome"], utc_now()))


def changesets_of(conn: sqlite3.Connection, persona_id: str) -> list[sqlite3.Row]:
    """The persona's interrupted groups, oldest first."""
    return conn.execute("SELECT * FROM cortex_changesets WHERE persona_id = ? ORDER BY rowid",
                        (persona_id,)).fetchall()


def personas_with_changesets(conn: sqlite3.Connection) -> list[str]:
    """Every persona with an interrupted group."""
    return [r[0] for r in conn.execute("SELECT DISTINCT persona_id FROM cortex_changesets")]


def delete_changeset(conn: sqlite3.Connection, changeset_id: str) -> None:
    """Removes a group's intent (it was completed or undone)."""
    conn.execute("DELETE FROM cortex_changesets WHERE id = ?", (changeset_id,))
