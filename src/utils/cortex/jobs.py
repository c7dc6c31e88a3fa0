"""Cortex update jobs and per-persona trigger state in SQLite (migration 0004).

Store functions take the connection first. The schema allows at most one queued and one running
job per persona, so enqueueing coalesces and claiming is single-flight even across threads.
"""
import json
import os
import sqlite3
import uuid
from datetime import datetime

from ..storage.clock import utc_now
from ..storage.db import transaction

FINISHED = ("done", "failed")
_COLUMNS = ("id, persona_id, status, trigger, files, usage, summary, error, error_message, "
            "retryable, message_from, message_to, created_at, started_at, finished_at")


def enqueue_job(conn: sqlite3.Connection, persona_id: str, trigger: str = "manual",
                now: str | None = None) -> tuple[dict, bool]:
    """The persona's queued job, or a new one; the flag says whether it was created now."""
    with transaction(conn):
        queued = _one(conn, "persona_id = ? AND status = 'queued'", (persona_id,))
        if queued:
            return queued, False
        job_id = uuid.uuid4().hex
        conn.execute("INSERT INTO cortex_jobs (id, persona_id, status, trigger, created_at) "
                     "VALUES (?, ?, 'queued', ?, ?)", (job_id, persona_id, trigger, now or utc_now()))
        return get_job(conn, job_id), True


def claim_next_job(conn: sqlite3.Connection, plan=None, now: str | None = None) -> dict | None:
    """Marks the oldest queued job of a persona with no running job as running, and returns it.

    `plan(persona_id) -> (first, last) | None` picks the messages it will process; it runs in the
    same transaction, so a running job always shows the range it covers.
    """
    with transaction(conn):
        row = conn.execute(
            "SELECT id, persona_id FROM cortex_jobs q WHERE status = 'queued' AND NOT EXISTS ("
            "SELECT 1 FROM cortex_jobs r WHERE r.persona_id = q.persona_id AND r.status = 'running'"
            ") ORDER BY created_at, rowid LIMIT 1").fetchone()
        if row is None:
            return None
        first, last = (plan(row["persona_id"]) if plan else None) or (None, None)
        conn.execute("UPDATE cortex_jobs SET status = 'running', started_at = ?, message_from = ?, "
                     "message_to = ?, claimed_by = ? WHERE id = ?",
                     (now or utc_now(), first, last, os.getpid(), row["id"]))
        return get_job(conn, row["id"])


def finish_job(conn: sqlite3.Connection, job_id: str, *, success: bool, files=(), usage=None,
               summary: str = "", error: str | None = None, error_message: str | None = None,
               retryable: bool = False, now: str | None = None) -> dict | None:
    """Ends a job as `done` or `failed` with what it changed and why it failed."""
    conn.execute(
        "UPDATE cortex_jobs SET status = ?, files = ?, usage = ?, summary = ?, error = ?, "
        "error_message = ?, retryable = ?, finished_at = ? WHERE id = ?",
        ("done" if success else "failed", json.dumps(list(files)),
         json.dumps(usage) if usage is not None else None, summary or "",
         None if success else error, None if success else error_message,
         int(bool(retryable) and not success), now or utc_now(), job_id))
    return get_job(conn, job_id)


def fail_interrupted(conn: sqlite3.Connection, now: str | None = None) -> int:
    """Marks jobs left `running` by a stopped process as failed (`interrupted`, retryable).

    Jobs another live process is running are left alone (several workers share one data dir);
    a job claimed by this very process belongs to an app it no longer runs.
    """
    with transaction(conn):
        running = conn.execute(
            "SELECT id, claimed_by FROM cortex_jobs WHERE status = 'running'").fetchall()
        orphans = [row["id"] for row in running if not _other_live_process(row["claimed_by"])]
        for job_id in orphans:
            conn.execute(
                "UPDATE cortex_jobs SET status = 'failed', error = 'interrupted', retryable = 1, "
                "error_message = 'The app stopped while this update ran; it will be retried.', "
                "finished_at = ? WHERE id = ?", (now or utc_now(), job_id))
    return len(orphans)


def _other_live_process(pid: int | None) -> bool:
    if not pid or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def get_job(conn: sqlite3.Connection, job_id: str) -> dict | None:
    """The job with `job_id` (files and usage decoded), or None."""
    return _one(conn, "id = ?", (job_id,))


def finished_since(conn: sqlite3.Connection, since: str) -> list[dict]:
    """Jobs that finished at or after `since` (any process), oldest first."""
    return _select(conn, "finished_at >= ? ORDER BY finished_at, rowid", (since,))


def active_jobs(conn: sqlite3.Connection, persona_id: str) -> dict:
    """The persona's `queued` and `running` jobs (each a job or None)."""
    return {status: _one(conn, "persona_id = ? AND status = ?", (persona_id, status))
            for status in ("queued", "running")}


def last_finished_job(conn: sqlite3.Connection, persona_id: str) -> dict | None:
    """The persona's most recently finished job, or None."""
    rows = _select(conn, "persona_id = ? AND status IN ('done', 'failed') "
                   "ORDER BY finished_at DESC, rowid DESC LIMIT 1", (persona_id,))
    return rows[0] if rows else None


def last_processed_id(conn: sqlite3.Connection, persona_id: str) -> int:
    """The last message id a successful update of this persona processed (0 when none)."""
    row = conn.execute("SELECT last_processed_id FROM cortex_state WHERE persona_id = ?",
                       (persona_id,)).fetchone()
    return row[0] if row else 0


def mark_processed(conn: sqlite3.Connection, persona_id: str, message_id: int) -> None:
    """Advances the processed mark to `message_id`; it never moves backwards, and a persona
    deleted while its update ran gets no mark."""
    conn.execute(
        "INSERT INTO cortex_state (persona_id, last_processed_id, updated_at) "
        "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM personas WHERE id = ?) "
        "ON CONFLICT(persona_id) DO UPDATE SET last_processed_id = "
        "MAX(last_processed_id, excluded.last_processed_id), updated_at = excluded.updated_at",
        (persona_id, message_id, utc_now(), persona_id))


def set_revision_summary(conn: sqlite3.Connection, job_id: str, summary: str) -> int:
    """Puts the model's summary on every revision the job wrote (table of migration 0003)."""
    return conn.execute("UPDATE cortex_revisions SET summary = ? WHERE job_id = ? AND author = 'ai'",
                        (summary, job_id)).rowcount


def job_for_api(job: dict) -> dict:
    """The §7 job shape: `{id, persona_id, status, files, error, ...}`."""
    return {key: job[key] for key in (
        "id", "persona_id", "status", "files", "error", "error_message", "retryable", "trigger",
        "summary", "usage", "message_from", "message_to", "created_at", "started_at",
        "finished_at")}


def seconds_since(timestamp: str | None, now: float) -> float | None:
    """Seconds from a stored ISO timestamp to the epoch time `now` (None without a timestamp)."""
    if not timestamp:
        return None
    return now - datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def _one(conn, where: str, params: tuple) -> dict | None:
    rows = _select(conn, where + " LIMIT 1", params)
    return rows[0] if rows else None


def _select(conn, where: str, params: tuple) -> list[dict]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM cortex_jobs WHERE {where}", params).fetchall()
    return [_decode(row) for row in rows]


def _decode(row: sqlite3.Row) -> dict:
    job = dict(row)
    job["files"] = json.loads(job["files"] or "[]")
    job["usage"] = json.loads(job["usage"]) if job["usage"] else None
    job["retryable"] = bool(job["retryable"])
    return job
