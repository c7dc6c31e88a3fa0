"""Cortex update jobs and per-persona trigger state in SQLite (migrations 0004, 0005, 0009).

Store functions take the connection first. The schema allows at most one queued and one running
job per persona, so enqueueing coalesces and claiming is single-flight even across threads.
A running job has an owner (a process token, see ownership.py) and a lease its owner renews;
recovery fails jobs whose owner is gone or whose lease ran out, and a job recovery failed can
no longer finish or apply edits (`finish_job` and `still_running` check its status).
Jobs read back as `CortexJob`, the model the API answers with: the runner reads the same object
(the lease and owner stay in SQLite, read only by the statements that judge them).
"""
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from ..models.cortex import ActiveJobs, CortexJob
from ..models.review import ConsolidationOutcome
from .clock import utc_now
from .db import transaction

FINISHED = ("done", "failed")
_COLUMNS = ("id, persona_id, status, trigger, files, usage, summary, error, error_message, "
            "retryable, message_from, message_to, created_at, started_at, finished_at, attempted, "
            "reason, proposal_id")
RETRY_WINDOW = 600.0  # seconds: a job interrupted twice in this time is not retried again
REASONS = ("threshold", "idle", "manual", "reconcile", "consolidate", "learn")
# A queued job of each kind may wait beside the others (index cortex_jobs_one_queued, 0043).
_KIND = "CASE reason WHEN 'consolidate' THEN 1 WHEN 'learn' THEN 2 ELSE 0 END"
# `plan(persona_id)`: the (first, last) message ids a claimed update will cover, or None.
Plan = Callable[[str], tuple[int, int] | None]


def enqueue_job(conn: sqlite3.Connection, persona_id: str, trigger: str = "manual",
                now: str | None = None, reason: str | None = None) -> tuple[CortexJob, bool]:
    """The persona's queued job of the same kind, or a new one; the flag says whether it was
    created now. A consolidation (`reason` "consolidate") queues beside a regular update; a
    reconciliation joins a queued update (which then reconciles first) and shows as `reconcile`."""
    reason = reason or trigger
    if reason not in REASONS or reason == "learn":
        raise ValueError(f"unknown job reason {reason!r}")
    with transaction(conn):
        queued = _one(conn, f"persona_id = ? AND status = 'queued' AND {_KIND} = ?",
                      (persona_id, 1 if reason == "consolidate" else 0))
        if queued:
            if reason == "reconcile" and queued.reason != "reconcile":
                conn.execute("UPDATE cortex_jobs SET reason = 'reconcile' WHERE id = ?",
                             (queued.id,))
                queued = get_job(conn, queued.id)
                assert queued is not None  # updated just above
            return queued, False
        job_id = uuid.uuid4().hex
        conn.execute("INSERT INTO cortex_jobs (id, persona_id, status, trigger, reason, "
                     "created_at) VALUES (?, ?, 'queued', ?, ?, ?)",
                     (job_id, persona_id, trigger, reason, now or utc_now()))
        created = get_job(conn, job_id)
        assert created is not None  # inserted just above
        return created, True


def covered_to(job: CortexJob | None) -> int:
    """The last message id a running job's regular update covers (0 for none, a learn run or a
    consolidation, which read no new chat)."""
    if job is None or job.reason in ("learn", "consolidate"):
        return 0
    return job.message_to or 0


def claim_next_job(conn: sqlite3.Connection, plan: Plan | None = None, now: str | None = None, *,
                   owner: str | None = None, lease_seconds: float = 0.0) -> CortexJob | None:
    """Marks the oldest queued job of a persona with no running job as running, and returns it.

    `plan(persona_id) -> (first, last) | None` picks the messages it will process; it runs in the
    same transaction, so a running job always shows the range it covers. `owner` (a process
    token, see ownership.py) holds it for `lease_seconds`, renewed by `renew_lease`; a job
    without an owner counts as abandoned at the next recovery.
    """
    with transaction(conn):
        row = conn.execute(
            "SELECT id, persona_id, reason, message_from, message_to FROM cortex_jobs q WHERE status = 'queued' AND NOT EXISTS ("
            "SELECT 1 FROM cortex_jobs r WHERE r.persona_id = q.persona_id AND r.status = 'running'"
            ") ORDER BY created_at, rowid LIMIT 1").fetchone()
        if row is None:
            return None
        if row["reason"] == "learn":  # its range was fixed when it was queued
            first, last = row["message_from"], row["message_to"]
        else:
            first, last = (plan(row["persona_id"]) if plan and row["reason"] != "consolidate"
                           else None) or (None, None)
        conn.execute("UPDATE cortex_jobs SET status = 'running', started_at = ?, message_from = ?, "
                     "message_to = ?, claimed_by = ?, owner = ?, lease_until = ? WHERE id = ?",
                     (now or utc_now(), first, last, os.getpid(), owner,
                      time.time() + lease_seconds, row["id"]))
        return get_job(conn, row["id"])


def renew_lease(conn: sqlite3.Connection, job_id: str, owner: str, lease_seconds: float) -> bool:
    """The owner's heartbeat: extends the lease of its running job; False if it lost the job."""
    return conn.execute(
        "UPDATE cortex_jobs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
        (time.time() + lease_seconds, job_id, owner)).rowcount == 1


def still_running(conn: sqlite3.Connection, job_id: str) -> bool:
    """False once a job is no longer `running` (finished, or failed by recovery); True for an
    id without a job row (a run started outside the queue)."""
    row = conn.execute("SELECT status FROM cortex_jobs WHERE id = ?", (job_id,)).fetchone()
    return row is None or row["status"] == "running"


def finish_job(conn: sqlite3.Connection, job_id: str, *, success: bool,
               files: Iterable[str] = (), usage: dict[str, Any] | None = None,
               summary: str = "", error: str | None = None, error_message: str | None = None,
               retryable: bool = False, attempted: list[dict[str, Any]] | None = None,
               now: str | None = None) -> CortexJob | None:
    """Ends a running job as `done` or `failed` with what it changed and why it failed (a job
    recovery already ended, or whose edits were applied, keeps that outcome)."""
    conn.execute(
        "UPDATE cortex_jobs SET status = ?, files = ?, usage = ?, summary = ?, error = ?, "
        "error_message = ?, retryable = ?, attempted = ?, finished_at = ? "
        "WHERE id = ? AND status = 'running'",
        ("done" if success else "failed", json.dumps(list(files)),
         json.dumps(usage) if usage is not None else None, summary or "",
         None if success else error, None if success else error_message,
         int(bool(retryable) and not success),
         json.dumps(attempted) if attempted else None, now or utc_now(), job_id))
    return get_job(conn, job_id)


def complete_job(conn: sqlite3.Connection, job_id: str, *, files: Iterable[str] = (),
                 usage: dict[str, Any] | None = None, summary: str = "",
                 proposal_id: str | None = None) -> None:
    """Marks a running job `done` in the transaction that applies (or proposes) its edits."""
    finish_job(conn, job_id, success=True, files=files, usage=usage, summary=summary)
    if proposal_id is not None:
        set_proposal(conn, job_id, proposal_id)


def set_proposal(conn: sqlite3.Connection, job_id: str, proposal_id: str | None) -> None:
    """Links a job to the proposal its edits went into."""
    conn.execute("UPDATE cortex_jobs SET proposal_id = ? WHERE id = ?", (proposal_id, job_id))


def note_reconciled(conn: sqlite3.Connection, job_id: str, files: Iterable[str],
                    summary: str) -> CortexJob | None:
    """Adds what a job's reconciliation changed to the job its update finished."""
    job = get_job(conn, job_id)
    if job is None:
        return None
    merged = list(dict.fromkeys([*files, *job.files]))
    text = "\n".join(part for part in (summary, job.summary) if part)
    conn.execute("UPDATE cortex_jobs SET files = ?, summary = ? WHERE id = ?",
                 (json.dumps(merged), text, job_id))
    return get_job(conn, job_id)


def fail_interrupted(conn: sqlite3.Connection, owner_alive: Callable[[str | None], bool],
                     now: float | None = None) -> int:
    """Marks `running` jobs whose owner process is gone, or whose lease expired without a
    heartbeat, as failed (`interrupted`, retryable); returns how many."""
    return len(fail_interrupted_jobs(conn, owner_alive, now))


def fail_interrupted_jobs(conn: sqlite3.Connection, owner_alive: Callable[[str | None], bool],
                          now: float | None = None) -> list[str]:
    """`fail_interrupted`, returning the ids of the jobs it failed."""
    now = time.time() if now is None else now
    running = conn.execute(
        "SELECT id, owner, lease_until FROM cortex_jobs WHERE status = 'running'").fetchall()
    orphans = [row["id"] for row in running
               if (row["lease_until"] or 0) < now or not owner_alive(row["owner"])]
    if not orphans:
        return []
    with transaction(conn):
        for job_id in orphans:
            conn.execute(
                "UPDATE cortex_jobs SET status = 'failed', error = 'interrupted', retryable = 1, "
                "error_message = 'The app stopped while this update ran; it will be retried.', "
                "finished_at = ? WHERE id = ? AND status = 'running'", (utc_now(), job_id))
    return orphans


def retry_interrupted(conn: sqlite3.Connection, job_id: str,
                      window_seconds: float = RETRY_WINDOW) -> CortexJob | None:
    """Queues again (or joins the queued one) the work of a job a crash interrupted, once: not
    a learn run (which resumes by itself, learn_runs.py), and not when another of the
    persona's jobs was interrupted within `window_seconds` (a job that kills its process
    every time must not restart it forever). Returns the queued job, or None."""
    job = get_job(conn, job_id)
    if job is None or job.reason == "learn" or job.error != "interrupted":
        return None
    since = datetime.fromtimestamp(time.time() - window_seconds, UTC).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    streak = conn.execute("SELECT COUNT(*) FROM cortex_jobs WHERE persona_id = ? AND "
                          "error = 'interrupted' AND finished_at >= ?",
                          (job.persona_id, since)).fetchone()[0]
    if streak > 1:
        return None
    return enqueue_job(conn, job.persona_id, job.trigger or "manual", reason=job.reason)[0]


def get_job(conn: sqlite3.Connection, job_id: str) -> CortexJob | None:
    """The job with `job_id` (as the API shows it, and the runner reads it), or None."""
    return _one(conn, "id = ?", (job_id,))


def finished_since(conn: sqlite3.Connection, since: str) -> list[CortexJob]:
    """Jobs that finished at or after `since` (any process), oldest first."""
    return _select(conn, "finished_at >= ? ORDER BY finished_at, rowid", (since,))


def active_jobs(conn: sqlite3.Connection, persona_id: str) -> ActiveJobs:
    """The persona's `queued` and `running` jobs (each a job or None). Each status is written
    into its statement: bound as a parameter, it decides which partial index
    (`cortex_jobs_one_queued`, `_one_running`) the plan may use, so SQLite prepared the
    statement again each time the value changed, twice per chat turn's trigger check."""
    return ActiveJobs(queued=_one(conn, "persona_id = ? AND status = 'queued'", (persona_id,)),
                      running=_one(conn, "persona_id = ? AND status = 'running'", (persona_id,)))


def last_finished_job(conn: sqlite3.Connection, persona_id: str) -> CortexJob | None:
    """The persona's most recently finished job other than a learn run (whose failure, e.g.
    cancelled, says nothing about the upstream the automatic triggers back off from), or None."""
    rows = _select(conn, "persona_id = ? AND status IN ('done', 'failed') AND reason != 'learn' "
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


def last_consolidation(conn: sqlite3.Connection, persona_id: str) -> ConsolidationOutcome | None:
    """The persona's newest finished consolidation job (done or failed), or None."""
    row = conn.execute(
        "SELECT id, status, summary, error, finished_at, proposal_id FROM cortex_jobs "
        "WHERE persona_id = ? AND reason = 'consolidate' AND status IN ('done', 'failed') "
        "ORDER BY finished_at DESC, rowid DESC LIMIT 1", (persona_id,)).fetchone()
    return ConsolidationOutcome.model_validate(dict(row)) if row else None


def consolidation_in_flight(conn: sqlite3.Connection, persona_id: str) -> str | None:
    """The id of the persona's queued or running consolidation, or None."""
    row = conn.execute("SELECT id FROM cortex_jobs WHERE persona_id = ? AND status IN "
                       "('queued', 'running') AND reason = 'consolidate'",
                       (persona_id,)).fetchone()
    return row["id"] if row else None


def newest_consolidation(conn: sqlite3.Connection, persona_id: str) -> sqlite3.Row | None:
    """`status` and `finished_at` of the persona's newest consolidation job, or None."""
    return conn.execute("SELECT status, finished_at FROM cortex_jobs WHERE persona_id = ? "
                        "AND reason = 'consolidate' ORDER BY created_at DESC, rowid DESC "
                        "LIMIT 1", (persona_id,)).fetchone()


def last_consolidation_done(conn: sqlite3.Connection, persona_id: str) -> str | None:
    """When the persona's last successful consolidation finished, or None."""
    return conn.execute("SELECT MAX(finished_at) FROM cortex_jobs WHERE persona_id = ? AND "
                        "reason = 'consolidate' AND status = 'done'", (persona_id,)).fetchone()[0]


def seconds_since(timestamp: str | None, now: float) -> float | None:
    """Seconds from a stored ISO timestamp to the epoch time `now` (None without a timestamp)."""
    if not timestamp:
        return None
    return now - datetime.fromisoformat(timestamp).timestamp()


def _one(conn: sqlite3.Connection, where: str, params: tuple[object, ...]) -> CortexJob | None:
    rows = _select(conn, where + " LIMIT 1", params)
    return rows[0] if rows else None


def _select(conn: sqlite3.Connection, where: str,
            params: tuple[object, ...]) -> list[CortexJob]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM cortex_jobs WHERE {where}", params).fetchall()
    return [_decode(row) for row in rows]


def _decode(row: sqlite3.Row) -> CortexJob:
    """A row as the model, validated once (its JSON columns decoded first)."""
    job = dict(row)
    job["files"] = json.loads(job["files"] or "[]")
    job["usage"] = json.loads(job["usage"]) if job["usage"] else None
    job["retryable"] = bool(job["retryable"])
    job["attempted"] = json.loads(job["attempted"]) if job["attempted"] else []
    return CortexJob.model_validate(job)
