"""CortexTrigger: decides when a persona's cortex is due for an update, and queues it.

Memory belongs to the persona, so counting does too: the messages of all its sessions after the
last id a successful update processed (imported history never counts: it is learned on request,
docs/chat-import.md). Messages a running job already covers do not count again,
so a running update plus new chat gives at most one follow-up job. After a failed job the
automatic triggers wait a little (a retryable failure `retry_delay`, any other ten times that)
so a broken upstream is not hammered; an update requested on demand never waits.
"""
import logging
import math
import time
from collections.abc import Callable

from ..models.cortex import CortexJob
from ..models.settings import CortexSettings
from ..storage import cortex_input, cortex_jobs as jobs, retractions, settings_store
from ..storage.db import Database, transaction
from ..storage.generations import ConfigCache
from .paths import validate_persona_id
from .settings import load_cortex_settings
from .worker import CortexWorker

log = logging.getLogger(__name__)
FREQUENCY_SHARE = {"frequent": 0.50, "medium": 0.75, "rare": 0.95}
RETRY_DELAY = 120.0


class CortexDisabled(Exception):
    """The cortex is switched off in the settings, so no update may run."""


class CortexTrigger:
    """Counts unprocessed messages per persona and queues updates at the threshold or when idle."""

    def __init__(self, db: Database, worker: CortexWorker, *,
                 clock: Callable[[], float] = time.time,
                 retry_delay: float = RETRY_DELAY, cache: ConfigCache | None = None) -> None:
        self._db = db
        self._cache = cache or ConfigCache()  # the process's, shared with the chat's prompt
        self._worker = worker
        self._clock = clock
        self._retry_delay = retry_delay

    def job(self, job_id: str) -> CortexJob | None:
        """One update job (any persona), or None."""
        return jobs.get_job(self._db.conn(), job_id)

    def threshold(self, frequency: str | None = None) -> tuple[str, int]:
        """The frequency setting (or `frequency`) and the message count it means for the current
        context limit."""
        settings, limit = self._settings()
        return _threshold(frequency or settings.frequency, limit)

    def status(self, persona_id: str) -> dict:
        """Progress towards the next update, without triggering anything."""
        return self._measure(persona_id)[0]

    def _settings(self) -> tuple[CortexSettings, int]:
        """The cortex settings and the context limit, in one read of the settings (for
        `threshold`; the check after a turn takes them from the process's cache, `_measure`)."""
        text, settings = settings_store.app_and_cortex(self._db.conn())
        return settings, settings_store.context_limit_of(text)

    def _measure(self, persona_id: str) -> tuple[dict, int]:
        """The status, and how many messages no finished or running update covers: one
        statement, whose `config` counter keys the settings as the process keeps them
        (the turn's prompt read them; a change by any process since raises the counter and
        they are read again), so a change made while a reply streamed still counts."""
        conn = self._db.conn()
        counts = cortex_input.trigger_state(conn, persona_id)  # one statement
        text, settings = settings_store.app_and_cortex_kept(conn, self._cache,
                                                            counts["config_generation"])
        enabled = settings.enabled
        frequency, threshold = _threshold(settings.frequency,
                                          settings_store.context_limit_of(text))
        pending = counts["pending"]
        current = counts["queued_id"] or counts["running_id"]
        return {"triggered": False, "job_id": current if enabled else None,
                "progress": round(min(1.0, pending / threshold), 4) if enabled else 0.0,
                "frequency": frequency, "unprocessed": counts["unprocessed"],
                "threshold": threshold, "enabled": enabled}, pending

    def check_and_trigger(self, persona_id: str, session_id: str | None = None) -> dict:
        """After a chat reply: queues an update when the threshold is reached.

        Returns `{triggered, job_id, progress, frequency, unprocessed, threshold, enabled}`.
        """
        state, pending = self._measure(persona_id)
        if state["enabled"] and pending >= state["threshold"] and not self._backing_off(persona_id):
            job, _ = self._worker.enqueue(persona_id, "threshold")
            state.update(triggered=True, job_id=job.id)
            log.info("Cortex threshold reached for %s (session %s): %d/%d messages",
                     persona_id, session_id, pending, state["threshold"])
        return state

    def request_update(self, persona_id: str) -> tuple[CortexJob, bool]:
        """On demand: queues an update now (or returns the queued one), and whether it was
        created now; raises CortexDisabled."""
        validate_persona_id(persona_id)
        if not load_cortex_settings(self._db.conn()).enabled:
            raise CortexDisabled("The cortex is disabled: enable it in the settings first.")
        return self._worker.enqueue(persona_id, "manual")

    def notice_retractions(self, persona_id: str) -> CortexJob | None:
        """After the conversation changed (edit, regenerate, delete, branch switch, session
        deleted): queues a reconciliation when memory learned from a message that left it;
        returns the job, or None when nothing needs reconciling (or the cortex is off)."""
        conn = self._db.conn()
        with transaction(conn):
            retractions.settle_unneeded(conn, persona_id)
        if not load_cortex_settings(conn).enabled:
            return None
        if not retractions.needs_reconciliation(conn, persona_id):
            return None
        job, _ = self._worker.enqueue(persona_id, "manual", reason="reconcile")
        log.info("Memory of %s learned from retracted messages: reconciliation %s",
                 persona_id, job.id)
        return job

    def scan_retractions(self, now: float | None = None) -> list[str]:
        """Queues reconciliations that are still owed (after a failure or a crash), unless the
        persona's last job failed moments ago upstream (a job a crash interrupted is retried
        at once: the upstream was not at fault); returns the job ids."""
        conn = self._db.conn()
        if not load_cortex_settings(conn).enabled:
            return []
        queued = []
        for persona_id in retractions.personas_waiting(conn):
            active = jobs.active_jobs(conn, persona_id)
            last = jobs.last_finished_job(conn, persona_id)
            crashed = last is not None and last.error == "interrupted"
            if active.queued is None and (crashed or not self._backing_off(persona_id, now)):
                job, _ = self._worker.enqueue(persona_id, "manual", reason="reconcile")
                queued.append(job.id)
        return queued

    def scan_idle(self, now: float | None = None) -> list[str]:
        """Queues updates for personas with a session idle for `idle_minutes` that holds
        unprocessed messages; returns the ids of the jobs queued (or joined)."""
        conn = self._db.conn()
        settings = load_cortex_settings(conn)
        if not settings.enabled:
            return []
        now = self._clock() if now is None else now
        idle_seconds = settings.idle_minutes * 60
        rows = cortex_input.sessions_with_unprocessed(conn)
        queued: dict[str, str] = {}
        for row in rows:
            persona_id = row["persona_id"]
            idle = jobs.seconds_since(row["last_at"], now)
            if persona_id in queued or idle is None or idle < idle_seconds:
                continue
            running = jobs.active_jobs(conn, persona_id).running
            if jobs.covered_to(running) >= row["last_id"]:
                continue
            if self._backing_off(persona_id, now):
                continue
            job, _ = self._worker.enqueue(persona_id, "idle")
            queued[persona_id] = job.id
            log.info("Session %s of %s idle with unprocessed messages: update %s",
                     row["session_id"], persona_id, job.id)
        return list(queued.values())

    def _backing_off(self, persona_id: str, now: float | None = None) -> bool:
        """True shortly after a failed job, so automatic triggers do not retry in a tight loop."""
        last = jobs.last_finished_job(self._db.conn(), persona_id)
        if last is None or last.status != "failed":
            return False
        delay = self._retry_delay * (1 if last.retryable else 10)
        elapsed = jobs.seconds_since(last.finished_at, self._clock() if now is None else now)
        return elapsed is not None and elapsed < delay


def _threshold(frequency: str, context_limit: int) -> tuple[str, int]:
    """`frequency` and the message count it means: its share of `context_limit`."""
    share = FREQUENCY_SHARE.get(frequency, FREQUENCY_SHARE["medium"])
    return frequency, max(1, math.ceil(share * context_limit - 1e-9))
