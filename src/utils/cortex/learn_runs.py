"""Learn runs: the windows an imported history is read in, and a run's view with its job.

A learn run is a cortex job with reason `learn` (storage/cortex_jobs.py) plus a row in
`cortex_learn_runs` (storage/learn_runs.py). Its windows are the session's imported messages on
the active branch, in order, cut every `window_messages` messages or earlier when a window's
text would pass the update's character limit, so each window is a conversation the regular
update could have been shown.
"""
import sqlite3
from typing import Any

from ..cooperative import blocking
from ..models.learn import StoredLearnRun
from ..storage import cortex_jobs as jobs, learn_runs as store
from ..storage.db import connect

CANCELLED_MESSAGE = "Learning was cancelled; nothing was remembered from this history."
cancelled, note_progress, set_windows = store.cancelled, store.note_progress, store.set_windows
window_messages = store.window_messages


def windows_off_loop(db_path: str, session_id: str, window_messages: int,
                     max_chars: int) -> list[dict[str, Any]]:
    """The session's windows (`imported_sizes` cut by `split_windows`), computed in a pool
    thread under gevent on a connection of its own: for a 50,000-message history SQLite alone
    takes most of a second (measured 0.3-0.7 s under load), too long for a worker's event loop."""
    return blocking(_windows_at, db_path, session_id, window_messages, max_chars)


def _windows_at(db_path: str, session_id: str, window_messages: int,
                max_chars: int) -> list[dict[str, Any]]:
    conn = connect(db_path)
    try:
        return split_windows(store.imported_sizes(conn, session_id), window_messages, max_chars)
    finally:
        conn.close()


def split_windows(sizes: list[dict[str, Any]], window_messages: int,
                  max_chars: int) -> list[dict[str, Any]]:
    """`sizes` (imported_sizes) cut into windows of at most `window_messages` messages and
    `max_chars` characters of text (a single longer message is a window of its own), each
    `{first, last, count, chars, bytes}`: the ids it spans, and its size."""
    windows: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
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
               message_range: tuple[int, int], windows: int,
               messages: int) -> StoredLearnRun | None:
    """Queues the learn job and its row; None when the persona already has a learn run queued
    or running (one at a time)."""
    job_id = store.insert_run(conn, persona_id, session_id, window_messages, message_range,
                              windows, messages)
    return get_run(conn, job_id) if job_id else None


def active_run(conn: sqlite3.Connection, persona_id: str) -> StoredLearnRun | None:
    """The persona's learn run that is queued or running, or None."""
    job_id = store.active_job_id(conn, persona_id)
    return get_run(conn, job_id) if job_id else None


def latest_run(conn: sqlite3.Connection, session_id: str) -> StoredLearnRun | None:
    """The newest learn run of the session, or None."""
    job_id = store.latest_job_id(conn, session_id)
    return get_run(conn, job_id) if job_id else None


def get_run(conn: sqlite3.Connection, job_id: str) -> StoredLearnRun | None:
    """The run with its job (None if the job row is gone), or None."""
    row = store.get_row(conn, job_id)
    return row.model_copy(update={"job": jobs.get_job(conn, job_id)}) if row else None


def request_cancel(conn: sqlite3.Connection, job_id: str) -> str:
    """Cancels the run (see storage/learn_runs.request_cancel)."""
    return store.request_cancel(conn, job_id, CANCELLED_MESSAGE)
