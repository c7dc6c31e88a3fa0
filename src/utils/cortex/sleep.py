"""SleepSchedule: decides when a persona's cortex is due for a consolidation, and queues it.

Two reasons: a file over its budget that changed since the last consolidation (so a
consolidation that could not shrink it does not run again until something new arrives), and
the schedule: at least `sleep_sessions` sessions started since the last consolidation and at
least `sleep_hours` hours since it (or since the first session, before the first one).
"""
import logging
import time
from collections.abc import Callable

from . import jobs
from .archive import last_consolidation
from .persona_settings import load_persona_settings
from .settings import load_cortex_settings

log = logging.getLogger(__name__)


class SleepSchedule:
    """Queues consolidation jobs (reason `consolidate`) when a persona's cortex is due."""

    def __init__(self, db, worker, budget: int, *, clock: Callable[[], float] = time.time):
        self._db = db
        self._worker = worker
        self._budget = budget
        self._clock = clock

    def status(self, persona_id: str, now: float | None = None) -> dict:
        """What the settings page shows: schedule, progress, last and queued consolidation."""
        conn = self._db.conn()
        settings = load_persona_settings(conn, persona_id)
        last = last_consolidation(conn, persona_id)
        done = _last_done(conn, persona_id)
        sessions = _sessions_since(conn, persona_id, done)
        since = done or _first_session(conn, persona_id)
        hours = jobs.seconds_since(since, self._clock() if now is None else now)
        queued = conn.execute("SELECT id FROM cortex_jobs WHERE persona_id = ? AND status IN "
                              "('queued', 'running') AND reason = 'consolidate'",
                              (persona_id,)).fetchone()
        return {"sleep_enabled": settings["sleep_enabled"],
                "sleep_sessions": settings["sleep_sessions"],
                "sleep_hours": settings["sleep_hours"], "sessions_since": sessions,
                "hours_since": round(hours / 3600, 2) if hours is not None else None,
                "over_budget": self._over_budget(conn, persona_id, done),
                "last_consolidation": last, "job_id": queued["id"] if queued else None,
                "due": self.due(persona_id, now)}

    def due(self, persona_id: str, now: float | None = None) -> str | None:
        """"budget", "schedule" or None."""
        conn = self._db.conn()
        done = _last_done(conn, persona_id)
        if self._over_budget(conn, persona_id, done):
            return "budget"
        settings = load_persona_settings(conn, persona_id)
        if not settings["sleep_enabled"]:
            return None
        if _sessions_since(conn, persona_id, done) < settings["sleep_sessions"]:
            return None
        since = done or _first_session(conn, persona_id)
        hours = jobs.seconds_since(since, self._clock() if now is None else now)
        return "schedule" if hours is not None and hours >= settings["sleep_hours"] * 3600 \
            else None

    def request(self, persona_id: str) -> tuple[dict, bool]:
        """"Consolidate now": queues a consolidation (or returns the queued one)."""
        return self._worker.enqueue(persona_id, "manual", reason="consolidate")

    def scan(self, now: float | None = None) -> list[str]:
        """Queues a consolidation for every persona that is due; returns the job ids."""
        conn = self._db.conn()
        if not load_cortex_settings(conn)["enabled"]:
            return []
        queued = []
        for (persona_id,) in conn.execute("SELECT id FROM personas").fetchall():
            reason = self.due(persona_id, now)
            if reason is None or self._busy(conn, persona_id):
                continue
            job, _ = self._worker.enqueue(persona_id, "threshold" if reason == "budget"
                                          else "idle", reason="consolidate")
            log.info("Cortex of %s due for consolidation (%s): job %s", persona_id, reason,
                     job["id"])
            queued.append(job["id"])
        return queued

    def _over_budget(self, conn, persona_id: str, done: str | None) -> bool:
        """A file over budget whose newest revision is newer than the last consolidation."""
        rows = conn.execute(
            "SELECT r.chars, r.created_at FROM cortex_revisions r WHERE r.persona_id = ? AND "
            "r.committed = 1 AND r.id = (SELECT MAX(id) FROM cortex_revisions x WHERE "
            "x.persona_id = r.persona_id AND x.filename = r.filename AND x.committed = 1)",
            (persona_id,)).fetchall()
        return any(row["chars"] > self._budget and (done is None or row["created_at"] > done)
                   for row in rows)

    @staticmethod
    def _busy(conn, persona_id: str) -> bool:
        """A consolidation is queued or running, or one failed within the last ten minutes."""
        row = conn.execute("SELECT status, finished_at FROM cortex_jobs WHERE persona_id = ? "
                           "AND reason = 'consolidate' ORDER BY created_at DESC, rowid DESC "
                           "LIMIT 1", (persona_id,)).fetchone()
        if row is None:
            return False
        if row["status"] in ("queued", "running"):
            return True
        elapsed = jobs.seconds_since(row["finished_at"], time.time())
        return row["status"] == "failed" and elapsed is not None and elapsed < 600


def _last_done(conn, persona_id: str) -> str | None:
    row = conn.execute("SELECT MAX(finished_at) FROM cortex_jobs WHERE persona_id = ? AND "
                       "reason = 'consolidate' AND status = 'done'", (persona_id,)).fetchone()
    return row[0]


def _sessions_since(conn, persona_id: str, since: str | None) -> int:
    return conn.execute("SELECT COUNT(*) FROM sessions WHERE persona_id = ? AND created_at > ?",
                        (persona_id, since or "")).fetchone()[0]


def _first_session(conn, persona_id: str) -> str | None:
    return conn.execute("SELECT MIN(created_at) FROM sessions WHERE persona_id = ?",
                        (persona_id,)).fetchone()[0]
