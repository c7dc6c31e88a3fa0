"""Queued session titles in SQLite (migration 0046), claimed like cortex jobs (cortex_jobs.py).

Store functions take the connection first. A session has at most one queued or running title
request; a running one carries its owner's token (ownership.py) and a lease. A request whose
owner is gone or whose lease ran out is failed (`interrupted`) when it is found, so a crashed
process never keeps a session from being named after its next reply. Requests read back as
`TitleJob` (models/titles.py), validated once per row.
"""
import sqlite3
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ..models.titles import SessionTitled, TitleJob
from .clock import utc_now
from .db import transaction

TEXT_LIMIT = 2000  # what the title prompt reads of each side (prompt_builder.title_prompt)
_COLUMNS = "id, session_id, user_text, reply_text, status, owner, lease_until, error, " \
           "created_at, finished_at"
OwnerAlive = Callable[[str | None], bool]


def enqueue(conn: sqlite3.Connection, session_id: str, user_text: str, reply_text: str,
            owner_alive: OwnerAlive, now: float | None = None) -> tuple[TitleJob, bool]:
    """The session's queued or running request, or a new one (True when created now). A
    running one whose owner died or whose lease ran out is failed first and replaced."""
    with transaction(conn):
        active = _one(conn, "session_id = ? AND status IN ('queued', 'running')", (session_id,))
        if active is not None and _abandoned(active, owner_alive, now):
            _fail(conn, active.id, "interrupted")
            active = None
        if active is not None:
            return active, False
        job_id = uuid.uuid4().hex
        conn.execute("INSERT INTO title_jobs (id, session_id, user_text, reply_text, status, "
                     "created_at) VALUES (?, ?, ?, ?, 'queued', ?)",
                     (job_id, session_id, user_text[:TEXT_LIMIT], reply_text[:TEXT_LIMIT],
                      utc_now()))
        created = _one(conn, "id = ?", (job_id,))
        assert created is not None  # inserted just above
        return created, True


def claim(conn: sqlite3.Connection, owner: str, lease_seconds: float,
          job_id: str | None = None) -> TitleJob | None:
    """Marks the oldest queued request (or `job_id`, if still queued) as running for `owner`
    and returns it; None when there is none. Looks before it writes, so an idle poll takes no
    write lock."""
    where, params = ("id = ? AND status = 'queued'", (job_id,)) if job_id else \
        ("status = 'queued' ORDER BY created_at, rowid", ())
    if conn.execute(f"SELECT 1 FROM title_jobs WHERE {where} LIMIT 1", params).fetchone() is None:
        return None
    with transaction(conn):
        row = _one(conn, where, params)
        if row is None:
            return None
        lease_until = time.time() + lease_seconds
        conn.execute("UPDATE title_jobs SET status = 'running', owner = ?, lease_until = ? "
                     "WHERE id = ?", (owner, lease_until, row.id))
        return row.model_copy(update={"status": "running", "owner": owner,
                                      "lease_until": lease_until})


def renew_lease(conn: sqlite3.Connection, job_id: str, owner: str, lease_seconds: float) -> bool:
    """The owner's heartbeat: extends its running request's lease; False if it lost it."""
    return conn.execute(
        "UPDATE title_jobs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'",
        (time.time() + lease_seconds, job_id, owner)).rowcount == 1


def finish(conn: sqlite3.Connection, job_id: str, owner: str, error: str | None = None) -> bool:
    """Ends the owner's running request as `done` (no `error`) or `failed`; False when it was
    no longer the owner's (recovery failed it meanwhile)."""
    return conn.execute(
        "UPDATE title_jobs SET status = ?, error = ?, finished_at = ? "
        "WHERE id = ? AND owner = ? AND status = 'running'",
        ("failed" if error else "done", error, utc_now(), job_id, owner)).rowcount == 1


def fail_interrupted(conn: sqlite3.Connection, owner_alive: OwnerAlive,
                     now: float | None = None) -> int:
    """Fails running requests whose owner is gone or whose lease ran out; returns how many."""
    running = _select(conn, "status = 'running'", ())
    orphans = [row.id for row in running if _abandoned(row, owner_alive, now)]
    if orphans:
        with transaction(conn):
            for job_id in orphans:
                _fail(conn, job_id, "interrupted")
    return len(orphans)


def titled_since(conn: sqlite3.Connection, since: str) -> list[SessionTitled]:
    """Each session a request named at or after `since` (`id` is the session's, `job_id` the
    request's), oldest first."""
    rows = conn.execute(
        "SELECT j.id AS job_id, s.id AS id, s.title AS title, j.finished_at AS finished_at "
        "FROM title_jobs j JOIN sessions s ON s.id = j.session_id "
        "WHERE j.finished_at >= ? AND j.status = 'done' ORDER BY j.finished_at, j.rowid",
        (since,)).fetchall()
    return [SessionTitled.model_validate(dict(row)) for row in rows]


def prune(conn: sqlite3.Connection, older_than: float = 86400.0) -> int:
    """Deletes requests that finished more than `older_than` seconds ago; returns how many."""
    cutoff = datetime.now(UTC) - timedelta(seconds=older_than)
    stamp = cutoff.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return conn.execute("DELETE FROM title_jobs WHERE finished_at < ?", (stamp,)).rowcount


def get(conn: sqlite3.Connection, job_id: str) -> TitleJob | None:
    """One request as stored, or None."""
    return _one(conn, "id = ?", (job_id,))


def _abandoned(row: TitleJob, owner_alive: OwnerAlive, now: float | None) -> bool:
    if row.status != "running":
        return False
    now = time.time() if now is None else now
    return (row.lease_until or 0) < now or not owner_alive(row.owner)


def _fail(conn: sqlite3.Connection, job_id: str, error: str) -> None:
    conn.execute("UPDATE title_jobs SET status = 'failed', error = ?, finished_at = ? "
                 "WHERE id = ? AND status = 'running'", (error, utc_now(), job_id))


def _one(conn: sqlite3.Connection, where: str, params: tuple[object, ...]
         ) -> TitleJob | None:
    rows = _select(conn, where + " LIMIT 1", params)
    return rows[0] if rows else None


def _select(conn: sqlite3.Connection, where: str, params: tuple[object, ...]
            ) -> list[TitleJob]:
    return [TitleJob.model_validate(dict(row)) for row in
            conn.execute(f"SELECT {_COLUMNS} FROM title_jobs WHERE {where}", params).fetchall()]
