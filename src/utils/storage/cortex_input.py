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


# One statement for the trigger check after every chat turn (cortex/trigger.py), which read
# the same in six: the processed mark, the queued job (a regular update before a consolidation
# or a learn run, as the index `cortex_jobs_one_queued` orders them), the running job and how
# far its regular update reaches (`cortex_jobs.covered_to`), the finished messages after the
# mark and those after what the running job covers (counted again only when that differs);
# and the `config` change counter (`generations.py`), under which the trigger takes the
# settings its threshold needs from the process's cache instead of reading them again. The
# counts read only the partial index `messages_unprocessed` (migration 0047), not the rows.
_TRIGGER_STATE = f"""
WITH mark AS (
    SELECT COALESCE((SELECT last_processed_id FROM cortex_state WHERE persona_id = ?1), 0)
        AS last,
    (SELECT id FROM cortex_jobs WHERE persona_id = ?1 AND status = 'queued'
        ORDER BY CASE reason WHEN 'consolidate' THEN 1 WHEN 'learn' THEN 2 ELSE 0 END
        LIMIT 1) AS queued_id),
running AS (
    SELECT id, CASE WHEN reason IN ('learn', 'consolidate') THEN 0
        ELSE COALESCE(message_to, 0) END AS covers
    FROM cortex_jobs WHERE persona_id = ?1 AND status = 'running' LIMIT 1),
counted AS MATERIALIZED (
    SELECT last, queued_id, (SELECT id FROM running) AS running_id,
        MAX(last, COALESCE((SELECT covers FROM running), 0)) AS covered,
        (SELECT COUNT(*) FROM messages WHERE persona_id = ?1 AND id > last
            AND {ACTIVE} AND streaming = 0) AS unprocessed
    FROM mark)
SELECT last, queued_id, running_id, unprocessed,
    (SELECT config FROM generations WHERE id = 1) AS config_generation,
    CASE WHEN covered = last THEN unprocessed ELSE (
        SELECT COUNT(*) FROM messages WHERE persona_id = ?1 AND id > covered
            AND {ACTIVE} AND streaming = 0) END AS pending
FROM counted"""


def trigger_state(conn: sqlite3.Connection, persona_id: str) -> sqlite3.Row:
    """`last` (the processed mark), `queued_id` and `running_id` (or None), `unprocessed` (finished
    messages after the mark), `pending` (those no finished or running update covers) and
    `config_generation` (the `config` change counter, read in the same statement)."""
    row: sqlite3.Row = conn.execute(_TRIGGER_STATE, (persona_id,)).fetchone()
    return row
