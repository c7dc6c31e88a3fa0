"""SleepSchedule: decides when a persona's cortex is due for a consolidation, and queues it.

Two reasons: a file over its budget that changed since the last consolidation (so a
consolidation that could not shrink it does not run again until something new arrives), and
the schedule: at least `sleep_sessions` sessions started since the last consolidation and at
least `sleep_hours` hours since it (or since the first session, before the first one).
"""
import logging
import sqlite3
import time
from collections.abc import Callable

from ..models.cortex import CortexJob
from ..storage import cortex_jobs as jobs, cortex_revisions, personas, sessions as session_store
from ..storage.db import Database
from .persona_settings import load_persona_settings
from .settings import load_cortex_settings
from .worker import CortexWorker

log = logging.getLogger(__name__)


class SleepSchedule:
    """Queues consolidation jobs (reason `consolidate`) when a persona's cortex is due."""

    def __init__(self, db: Database, worker: CortexWorker, budget: int, *,
                 clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._worker = worker
        self._budget = budget
        self._clock = clock

    def status(self, persona_id: str, now: float | None = None) -> dict:
        """What the settings page shows: schedule, progress, last and queued consolidation."""
        conn = self._db.conn()
        settings = load_persona_settings(conn, persona_id)
        last = jobs.last_consolidation(conn, persona_id)
        done = jobs.last_consolidation_done(conn, persona_id)
        sessions = session_store.sessions_since(conn, persona_id, done)
        since = done or session_store.first_session_at(conn, persona_id)
        hours = jobs.seconds_since(since, self._clock() if now is None else now)
        queued = jobs.consolidation_in_flight(conn, persona_id)
        return {"sleep_enabled": settings["sleep_enabled"],
                "sleep_sessions": settings["sleep_sessions"],
                "sleep_hours": settings["sleep_hours"], "sessions_since": sessions,
                "hours_since": round(hours / 3600, 2) if hours is not None else None,
                "over_budget": self._over_budget(conn, persona_id, done),
                "last_consolidation": last.model_dump(mode="json") if last else None,
                "job_id": queued,
                "due": self.due(persona_id, now)}

    def due(self, persona_id: str, now: float | None = None) -> str | None:
        """"budget", "schedule" or None."""
        conn = self._db.conn()
        done = jobs.last_consolidation_done(conn, persona_id)
        if self._over_budget(conn, persona_id, done):
            return "budget"
        settings = load_persona_settings(conn, persona_id)
        if not settings["sleep_enabled"]:
            return None
        if session_store.sessions_since(conn, persona_id, done) < settings["sleep_sessions"]:
            return None
        since = done or session_store.first_session_at(conn, persona_id)
        hours = jobs.seconds_since(since, self._clock() if now is None else now)
        return "schedule" if hours is not None and hours >= settings["sleep_hours"] * 3600 \
            else None

    def request(self, persona_id: str) -> tuple[CortexJob, bool]:
        """"Consolidate now": queues a consolidation (or returns the queued one), and whether it
        was created now."""
        return self._worker.enqueue(persona_id, "manual", reason="consolidate")

    def scan(self, now: float | None = None) -> list[str]:
        """Queues a consolidation for every persona that is due; returns the job ids."""
        conn = self._db.conn()
        if not load_cortex_settings(conn).enabled:
            return []
        queued = []
        for persona_id in personas.persona_ids(conn):
            reason = self.due(persona_id, now)
            if reason is None or self._busy(conn, persona_id):
                continue
            job, _ = self._worker.enqueue(persona_id, "threshold" if reason == "budget"
                                          else "idle", reason="consolidate")
            log.info("Cortex of %s due for consolidation (%s): job %s", persona_id, reason,
                     job.id)
            queued.append(job.id)
        return queued

    def _over_budget(self, conn: sqlite3.Connection, persona_id: str, done: str | None) -> bool:
        """A file over budget whose newest revision is newer than the last consolidation."""
        rows = cortex_revisions.latest_sizes(conn, persona_id)
        return any(row["chars"] > self._budget and (done is None or row["created_at"] > done)
                   for row in rows)

    @staticmethod
    def _busy(conn: sqlite3.Connection, persona_id: str) -> bool:
        """A consolidation is queued or running, or one failed within the last ten minutes."""
        row = jobs.newest_consolidation(conn, persona_id)
        if row is None:
            return False
        if row["status"] in ("queued", "running"):
            return True
        elapsed = jobs.seconds_since(row["finished_at"], time.time())
        return row["status"] == "failed" and elapsed is not None and elapsed < 600

