"""The conversation as memory reads it: unprocessed messages of a persona's active branches.

Memory sees the active branch (message_changes records the rest), and not imported history:
that is learned only on request (migration 0042, docs/chat-import.md). A reply still being
generated, and everything after it, waits for the next run: the processed mark is one id, so it
must not pass a message that is not finished yet.
"""
import sqlite3

ACTIVE = "on_branch = 1 AND imported = 0"
_NO_STREAM = 2**63 - 1


def unprocessed_sizes(conn: sqlite3.Connection, persona_id: str, after: int,
                      limit: int) -> list[sqlite3.Row]:
    """`id` and `chars` of the persona's next `limit` messages after `after`, oldest first,
    stopping before the first reply still streaming."""
    return conn.execute(
        "SELECT id, length(content) AS chars FROM messages WHERE persona_id = ? AND id > ? "
        f"AND {ACTIVE} AND id < ? ORDER BY id LIMIT ?",
        (persona_id, after, _first_streaming(conn, persona_id), limit)).fetchall()


def range_messages(conn: sqlite3.Connection, persona_id: str,
                   message_range: tuple[int, int]) -> list[sqlite3.Row]:
    """The range's messages with their session's title, in id order."""
    return conn.execute(
        "SELECT m.id, m.session_id, m.role, m.content, m.status, m.created_at, s.title "
        "FROM messages m JOIN sessions s ON s.id = m.session_id "
        "WHERE m.persona_id = ? AND m.id BETWEEN ? AND ? AND m.on_branch = 1 "
        "AND m.imported = 0 ORDER BY m.id",
        (persona_id, *message_range)).fetchall()


def count_after(conn: sqlite3.Connection, persona_id: str, after_id: int) -> int:
    """How many finished messages memory has not processed after `after_id`."""
    return conn.execute("SELECT COUNT(*) FROM messages WHERE persona_id = ? AND id > ? "
                        "AND on_branch = 1 AND streaming = 0 AND imported = 0",
                        (persona_id, after_id)).fetchone()[0]


def sessions_with_unprocessed(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Per session holding finished unprocessed messages: `persona_id`, `session_id`, the
    newest such message's `last_id` and `last_at`."""
    return conn.execute(
        "SELECT m.persona_id, m.session_id, MAX(m.id) AS last_id, "
        "MAX(m.created_at) AS last_at FROM messages m "
        "LEFT JOIN cortex_state st ON st.persona_id = m.persona_id "
        "WHERE m.id > COALESCE(st.last_processed_id, 0) AND m.on_branch = 1 "
        "AND m.streaming = 0 AND m.imported = 0 GROUP BY m.session_id").fetchall()


def _first_streaming(conn: sqlite3.Connection, persona_id: str) -> int:
    row = conn.execute("SELECT MIN(id) FROM messages WHERE persona_id = ? AND streaming = 1",
                       (persona_id,)).fetchone()
    return row[0] if row[0] is not None else _NO_STREAM
