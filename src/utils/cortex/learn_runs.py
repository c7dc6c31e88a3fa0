"""Learn runs in SQLite (table `cortex_learn_runs`, migration 0043) and the windows they read.

A learn run is a cortex job with reason `learn` (jobs.py) plus one row here: the imported
session it reads, the window size, progress (`windows_done` of `windows`) and a cancel request.
Its windows are the session's imported messages on the active branch, in order, cut every
`window_messages` messages or earlier when a window's text would pass the update's character
limit, so each window is a conversation the regular update could have been shown.
"""
import sqlite3

from ..cooperative import blocking
from ..storage.clock import utc_now
from ..storage.db import connect, transaction
from . import jobs

_COLUMNS = ("job_id, persona_id, session_id, window_messages, windows, windows_done, messages, "
            "cancel_requested, created_at")


def imported_sizes(conn: sqlite3.Connection, session_id: str) -> list[dict]:
    """The session's imported messages on its active branch, oldest first, as `{id, chars,
    bytes}` only: sizing and cutting 50,000 messages must not read their text (SQLite counts)."""
    rows = conn.execute(
        "SELECT id, length(content) AS chars, length(CAST(content AS BLOB)) AS bytes "
        "FROM messages WHERE session_id = ? AND on_branch = 1 AND imported = 1 "
        "AND streaming = 0 ORDER BY id", (session_id,)).fetchall()
    return [dict(row) for row in rows]


def windows_off_loop(db_path: str, session_id: str, window_messages: int,
                     max_chars: int) -> list[dict]:
    """The session's windows (`imported_sizes` cut by `split_windows`), computed in a pool
    thread under gevent on a connection of its own: for a 50,000-message history SQLite alone
    takes most of a second (measured 0.3-0.7 s under load), too long for a worker's event loop."""
    return blocking(_windows_at, db_path, session_id, window_messages, max_chars)


def _windows_at(db_path: str, session_id: str, window_messages: int,
                max_chars: int) -> list[dict]:
    conn = connect(db_path)
    try:
        return split_windows(imported_sizes(conn, session_id), window_messages, max_chars)
    finally:
        conn.close()


def window_messages(conn: sqlite3.Connection, session_id: str, first: int,
                    last: int) -> list[dict]:
    """One window's messages (ids `first`..`last` still on the branch) as an update shows them,
    with their session's title."""
    rows = conn.execute(
        "SELECT m.id, m.session_id, m.role, m.content, m.status, m.created_at, s.title "
        "FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.session_id = ? "
        "AND m.id BETWEEN ? AND ? AND m.on_branch = 1 AND m.imported = 1 AND m.streaming = 0 "
        "ORDER BY m.id", (session_id, first, last)).fetchall()
    return [dict(row) for row in rows]


def split_windows(sizes: list[dict], window_messages: int, max_chars: int) -> list[dict]:
    """`sizes` (imported_sizes) cut into windows of at most `window_messages` messages and
    `max_chars` characters of text (a single longer message is a window of its own), each
    `{first, last, count, chars, bytes}`: the ids it spans, and its size."""
    windows: list[dict] = []
    current: dict | None = None
    for message in sizes:
        if current and (current["count"] >= window_messages
                        or current["chars"] + message["chars"] > max_chars):
            windows.append(current)
            current = None
        if current is None:
            current = {"first": message["id"], "count": 0, "chars": 0, "bytes": 0}
        current["last"] = message["id"]
        current["count"] += 1
        current["chars"] += message["chars"]
        current["bytes"] += message["bytes"]
    if current:
        windows.append(current)
    return windows


def create_run(conn: sqlite3.Connection, persona_id: str, session_id: str, window_messages: int,
               message_range: tuple[int, int], windows: int, messages: int) -> dict | None:
    """Queues the learn job and its row in one transaction; None when the persona already has a
    learn run queued or running (one at a time)."""
    with transaction(conn):
        if active_run(conn, persona_id) is not None:
            return None
        job = jobs.enqueue_learn(conn, persona_id, message_range)
        conn.execute(
            f"INSERT INTO cortex_learn_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, 0, ?, 0, ?)",
            (job["id"], persona_id, session_id, window_messages, windows, messages, utc_now()))
    return get_run(conn, job["id"])


def active_run(conn: sqlite3.Connection, persona_id: str) -> dict | None:
    """The persona's learn run that is queued or running, or None."""
    row = conn.execute(
        "SELECT l.job_id FROM cortex_learn_runs l JOIN cortex_jobs j ON j.id = l.job_id "
        "WHERE l.persona_id = ? AND j.status IN ('queued', 'running') LIMIT 1",
        (persona_id,)).fetchone()
    return get_run(conn, row[0]) if row else None


def latest_run(conn: sqlite3.Connection, session_id: str) -> dict | None:
    """The newest learn run of the session, or None."""
    row = conn.execute("SELECT job_id FROM cortex_learn_runs WHERE session_id = ? "
                       "ORDER BY created_at DESC, rowid DESC LIMIT 1", (session_id,)).fetchone()
    return get_run(conn, row[0]) if row else None


def get_run(conn: sqlite3.Connection, job_id: str) -> dict | None:
    """The run with its job's state, or None."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM cortex_learn_runs WHERE job_id = ?",
                       (job_id,)).fetchone()
    if row is None:
        return None
    return {**dict(row), "cancel_requested": bool(row["cancel_requested"]),
            "job": jobs.get_job(conn, job_id)}


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


def request_cancel(conn: sqlite3.Connection, job_id: str) -> str:
    """Cancels the run: a queued one ends at once (`failed`, `cancelled`), a running one stops
    before its next window and never applies. Returns "cancelled", "cancelling" or, when it is
    too late (finished, or its one group of edits is being applied), "finished"."""
    with transaction(conn):
        job = jobs.get_job(conn, job_id)
        if job is None or job["status"] in jobs.FINISHED or conn.execute(
                "SELECT 1 FROM cortex_changesets WHERE job_id = ?", (job_id,)).fetchone():
            return "finished"
        conn.execute("UPDATE cortex_learn_runs SET cancel_requested = 1 WHERE job_id = ?",
                     (job_id,))
        if job["status"] == "queued":
            conn.execute(
                "UPDATE cortex_jobs SET status = 'failed', error = 'cancelled', retryable = 0, "
                "error_message = ?, finished_at = ? WHERE id = ? AND status = 'queued'",
                (CANCELLED_MESSAGE, utc_now(), job_id))
            return "cancelled"
        return "cancelling"


CANCELLED_MESSAGE = "Learning was cancelled; nothing was remembered from this history."
