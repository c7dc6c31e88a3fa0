"""Queries behind a conversation's memory notes: the session's active branch and the persona's
AI revisions whose message range reaches into it."""
import sqlite3


def branch_ids(conn: sqlite3.Connection, session_id: str) -> list[int]:
    """Ids of the session's messages on its active branch, oldest first."""
    return [row[0] for row in conn.execute(
        "SELECT id FROM messages WHERE session_id = ? AND on_branch = 1 ORDER BY id",
        (session_id,))]


def ai_revisions(conn: sqlite3.Connection, persona_id: str, low: int, high: int,
                 limit: int) -> list[sqlite3.Row]:
    """Committed revisions written by updates (they carry a message range) whose range overlaps
    message ids `low..high`, each with the content of the file's revision before it."""
    return conn.execute(
        "SELECT r.id, r.filename, r.content, r.created_at, r.job_id, r.message_from, "
        "r.message_to, (SELECT p.content FROM cortex_revisions p WHERE p.persona_id = "
        "r.persona_id AND p.filename = r.filename AND p.committed = 1 AND p.id < r.id "
        "ORDER BY p.id DESC LIMIT 1) AS previous FROM cortex_revisions r "
        "WHERE r.persona_id = ? AND r.committed = 1 AND r.author = 'ai' "
        "AND r.message_to IS NOT NULL AND r.message_to >= ? AND r.message_from <= ? "
        "ORDER BY r.id DESC LIMIT ?", (persona_id, low, high, limit)).fetchall()


def current_contents(conn: sqlite3.Connection, persona_id: str) -> dict[str, str]:
    """Each cortex file's text as it is now (its newest committed revision), by filename."""
    return {row[0]: row[1] for row in conn.execute(
        "SELECT r.filename, r.content FROM cortex_revisions r WHERE r.persona_id = ? "
        "AND r.committed = 1 AND r.id = (SELECT MAX(p.id) FROM cortex_revisions p "
        "WHERE p.persona_id = r.persona_id AND p.filename = r.filename AND p.committed = 1)",
        (persona_id,))}
