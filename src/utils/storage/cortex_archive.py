"""What a consolidation let go (table `cortex_archive`): per file, readable, searchable, restorable.

The archive is never part of any prompt. Each entry holds the lines one consolidation removed
from one file (computed from the texts, not from what the model claims it dropped), with the
revisions before and after, so nothing is forgotten silently.
"""
import sqlite3
from typing import Any

from .clock import utc_now

_COLUMNS = ("id, persona_id, filename, text, chars, job_id, revision_before, revision_after, "
            "created_at, restored_at, restored_revision")


def add_entry(conn: sqlite3.Connection, persona_id: str, entry: dict[str, Any]) -> int:
    """Stores one file's dropped text (inside the transaction that applies the consolidation)."""
    rowid = conn.execute(
        "INSERT INTO cortex_archive (persona_id, filename, text, chars, job_id, revision_before, "
        "revision_after, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (persona_id, entry["filename"], entry["text"], len(entry["text"]), entry.get("job_id"),
         entry.get("revision_before"), entry.get("revision_after"), utc_now())).lastrowid
    assert rowid is not None  # set by the INSERT
    return rowid


def list_entries(conn: sqlite3.Connection, persona_id: str, filename: str,
                 query: str | None = None) -> list[dict[str, Any]]:
    """The file's archive entries, newest first; `query` keeps those containing it (any case)."""
    sql = f"SELECT {_COLUMNS} FROM cortex_archive WHERE persona_id = ? AND filename = ?"
    params: list[str] = [persona_id, filename]
    if query:
        sql += " AND instr(lower(text), lower(?)) > 0"
        params.append(query)
    return [dict(row) for row in conn.execute(sql + " ORDER BY id DESC", params)]


def get_entry(conn: sqlite3.Connection, persona_id: str, filename: str, entry_id: int
              ) -> dict[str, Any] | None:
    """One entry of this persona's file, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM cortex_archive WHERE id = ? AND persona_id = ? "
                       "AND filename = ?", (entry_id, persona_id, filename)).fetchone()
    return dict(row) if row else None


def mark_restored(conn: sqlite3.Connection, entry_id: int, revision: int) -> None:
    """Notes that (some of) the entry was put back, by which revision."""
    conn.execute("UPDATE cortex_archive SET restored_at = ?, restored_revision = ? WHERE id = ?",
                 (utc_now(), revision, entry_id))
