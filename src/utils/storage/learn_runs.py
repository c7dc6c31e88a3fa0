"""Learn runs in SQLite (table `cortex_learn_runs`, migration 0043) and the imported messages
they read (docs/chat-import.md#learning-from-it).

A learn run is a cortex job with reason `learn` plus one row here: the imported session it
reads, the window size, progress (`windows_done` of `windows`) and a cancel request. The cutting
into windows and the run itself live in cortex/ (learn_runs.py, learn_run.py).
"""
import sqlite3
import uuid
from typing import Any

from ..models.learn import StoredLearnRun
from .clock import utc_now
from .db import transaction

_COLUMNS = ("job_id, persona_id, session_id, window_messages, windows, windows_done, messages, "
            "cancel_requested, created_at")


def imported_sizes(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """The session's imported messages on its active branch, oldest first, as `{id, chars,
    bytes}` only: sizing and cutting 50,000 messages must not read their text (SQLite counts)."""
    rows = conn.execute(
        "SELECT id, length(content) AS chars, length(CAST(content AS BLOB)) AS bytes "
        "FROM messages WHERE session_id = ? AND on_branch = 1 AND imported = 1 "
        "AND streaming = 0 ORDER BY id", (session_id,)).fetchall()
    return [dict(row) for row in rows]


def window_messages(conn: sqlite3.Connection, session_id: str, first: int,
                    last: int) -> list[dict[str, Any]]:
    """One window's messages (ids `first`..`last` still on the branch) as an update shows them,
    with their session's title."""
    rows = conn.execute(
        "SELECT m.id, m.session_id, m.role, m.content, m.status, m.created_at, s.title "
        "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.session_id = ? "
        "AND m.id BETWEEN ? AND ? AND m.on_branch = 1 AND m.imported = 1 AND m.streaming = 0 "
        "ORDER BY m.id", (session_id, first, last)).fetchall()
    return [dict(row) for row in rows]


def insert_run(conn: sqlite3.Connection, persona_id: str, session_id: str,
               window_messages: int, message_range: tuple[int, int], windows: int,
               messages: int) -> str | None:
    """Queues a learn job over the imported messages `message_range` and its row, in one
    transaction; its id, or None when the persona already has a learn run queued or running.
    The job's range is what a retraction meanwhile is checked against (retractions.py); a learn
    job never moves the processed mark."""
    with transaction(conn):
        if active_job_id(conn, persona_id) is not None:
            return None
        job_id, now = uuid.uuid4().hex, utc_now()
        conn.execute("INSERT INTO cortex_jobs (id, persona_id, status, trigger, reason, "
                     "created_at, message_from, message_to) VALUES (?, ?, 'queued', 'manual', "
                     "'learn', ?, ?, ?)", (job_id, persona_id, now, *message_range))
        conn.execute(
            f"INSERT INTO cortex_learn_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, 0, ?, 0, ?)",
            (job_id, persona_id, session_id, window_messages, windows, messages, now))
    return job_id


def active_job_id(conn: sqlite3.Connection, persona_id: str) -> str | None:
    """The job id of the persona's learn run that is queued or running, or None."""
    row = conn.execute(
        "SELECT l.job_id FROM cortex_learn_runs l JOIN cortex_jobs j ON j.id = l.job_id "
        "WHERE l.persona_id = ? AND j.status IN ('queued', 'running') LIMIT 1",
        (persona_id,)).fetchone()
    return row[0] if row else None


def latest_job_id(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The job id of the session's newest learn run, or None."""
    row = conn.execute("SELECT job_id FROM cortex_learn_runs WHERE session_id = ? "
                       "ORDER BY created_at DESC, rowid DESC LIMIT 1", (session_id,)).fetchone()
    return row[0] if row else None


def get_row(conn: sqlite3.Connection, job_id: str) -> StoredLearnRun | None:
    """The run's own row (without its job), or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM cortex_learn_runs WHERE job_id = ?",
                       (job_id,)).fetchone()
    return StoredLearnRun.model_validate(dict(row)) if row else None


def set_windows(conn: sqlite3.Connection, job_id: str, windows: int, messages: int) -> None:
    """The windows and messages the run found when it started (the session may have changed
    since the estimate)."""
    conn.execute("UPDATE cortex_learn_runs SET windows = ?, messages = ?, windows_done = 0 "
                 "WHERE job_id = ?", (windows, messages, job_id))


def note_progress(conn: sqlite3.Connection, job_id: str, done: int) -> None:
    """`done` windows have been read (their edits are staged, nothing is applied yet)."""
    conn.execute("UPDATE cortex_learn_runs SET windows_done = ? WHERE job_id = ?", (done, job_id))


def cancelled(conn: sqlite3.Connection, job_id: str) -> bool:
    """True once cancelling the run was asked for."""
    row = conn.execute("SELECT cancel_requested FROM cortex_learn_runs WHERE job_id = ?",
                       (job_id,)).fetchone()
    return bool(row and row[0])


def request_cancel(conn: sqlite3.Connection, job_id: str, message: str) -> str:
    """Cancels the run: a queued one ends at once (`failed`, `cancelled`, `message`), a running
    one stops before its next window and never applies. Returns "cancelled", "cancelling" or,
    when it is too late (finished, or its one group of edits is being applied), "finished"."""
    with transaction(conn):
        row = conn.execute("SELECT status FROM cortex_jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None or row["status"] in ("done", "failed") or conn.execute(
                "SELECT 1 FROM cortex_changesets WHERE job_id = ?", (job_id,)).fetchone():
            return "finished"
        conn.execute("UPDATE cortex_learn_runs SET cancel_requested = 1 WHERE job_id = ?",
                     (job_id,))
        if row["status"] == "queued":
            conn.execute(
                "UPDATE cortex_jobs SET status = 'failed', error = 'cancelled', retryable = 0, "
                "error_message = ?, finished_at = ? WHERE id = ? AND status = 'queued'",
                (message, utc_now(), job_id))
            return "cancelled"
        return "cancelling"
