"""CortexWorker: runs queued cortex updates, in a background thread or driven by tests.

Jobs live in SQLite (see `storage/cortex_jobs.py`), so a queued job survives a restart and a
job a restart interrupted is marked failed. The worker never runs two jobs of one persona at once: the schema
allows one running job per persona and `claim_next_job` skips personas that have one.
With several worker processes on one data directory, a job may finish in another process: the
background loop also looks for jobs finished elsewhere (`announce_foreign`) and tells this
process's subscribers about them, so a WebSocket hears of every update of its personas; the
process that finishes a job rings the news bells of the others (`told`,
utils/process_bells.py), so a chat worker looks when one finished, not every second. A
process that queues jobs for another to run (a chat worker, for the memory process) rings that process's
doorbell (`ring`, utils/doorbell.py), so the runner's loop sleeps until then (`start(rest=…)`)
instead of looking every second.
A job this worker claims carries its owner token and a lease (`lease_seconds`), renewed by a
heartbeat thread while the job runs; each pass of the loop fails jobs whose owner is gone or
whose lease ran out (`reap`), so none stays `running` after its process died or hung.
"""
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from ..listeners import Listeners
from ..models.cortex import CortexJob
from ..storage import cortex_jobs as jobs
from ..storage.clock import utc_now
from ..storage.db import Database
from .heartbeat import Heartbeat
from .ownership import ProcessOwner
from .update import CortexUpdateService

log = logging.getLogger(__name__)
POLL_SECONDS = 30.0
FOREIGN_POLL_SECONDS = 1.0
LEASE_SECONDS = 60.0


class CortexWorker:
    """Executes cortex update jobs one at a time and tells subscribers when each one finishes."""

    def __init__(self, db: Database, update_service: CortexUpdateService, owner: ProcessOwner,
                 *, poll_seconds: float = POLL_SECONDS,
                 lease_seconds: float = LEASE_SECONDS,
                 ring: Callable[[], None] | None = None,
                 told: Callable[[], None] | None = None) -> None:
        self._db = db
        self._ring = ring
        self._told = told
        self._rest = FOREIGN_POLL_SECONDS
        self._update = update_service
        self._owner = owner
        self._lease = lease_seconds
        self._poll = poll_seconds
        self._cond = threading.Condition()
        self._subscribers: Listeners[dict] = Listeners("A cortex job subscriber failed")
        self._thread: threading.Thread | None = None
        self._tick: Callable[[], object] | None = None
        self._stopping = False
        self._wake = False
        self._announced: deque[str] = deque(maxlen=1000)
        self._watermark = utc_now()
        self._next_tick = 0.0

    def recover_interrupted(self, now: float | None = None) -> int:
        """Completes groups of edits a crash interrupted, then fails jobs whose owner is gone or
        whose lease expired (`interrupted`), and queues each one's work again (once: see
        `cortex_jobs.retry_interrupted`); at start-up and on every pass."""
        self._update.recover_staged()
        conn = self._db.conn()
        failed = jobs.fail_interrupted_jobs(conn, self._owner.is_alive, now)
        if failed:
            log.warning("Marked %d interrupted cortex update job(s) as failed", len(failed))
            self._tell()
        for job_id in failed:
            retry = jobs.retry_interrupted(conn, job_id)
            if retry is not None:
                log.info("Cortex job %s queued again as %s", job_id, retry.id)
        return len(failed)

    def enqueue(self, persona_id: str, trigger: str = "manual",
                reason: str | None = None) -> tuple[CortexJob, bool]:
        """Queues an update, or a consolidation with `reason` "consolidate" (or returns the
        persona's queued one of that kind); True when created now."""
        job, created = jobs.enqueue_job(self._db.conn(), persona_id, trigger, reason=reason)
        if created:
            log.info("Queued cortex update %s for %s (%s)", job.id, persona_id, trigger)
        self.wake()
        return job, created

    def wake(self) -> None:
        """Wakes the background loop, and rings the doorbell of the process that runs the jobs
        (if another does), for a job just queued (`enqueue`, a learn run)."""
        self.nudge()
        if self._ring is not None:
            self._ring()

    def nudge(self) -> None:
        """Wakes this process's background loop (the doorbell rang: another process queued a
        job)."""
        with self._cond:
            self._wake = True
            self._cond.notify_all()

    def run_pending(self) -> list[CortexJob]:
        """Runs queued jobs in this thread until none is left; returns the finished jobs."""
        finished = []
        while (job := jobs.claim_next_job(self._db.conn(), self._plan, owner=self._owner.token,
                                          lease_seconds=self._lease)) is not None:
            renew = partial(jobs.renew_lease, job_id=job.id, owner=self._owner.token,
                            lease_seconds=self._lease)
            with Heartbeat(self._db.path, renew, self._lease, f"Cortex job {job.id}"):
                finished.append(self._run(job))
        return finished

    def wait_for_job(self, job_id: str, timeout: float = 10.0) -> CortexJob:
        """Blocks until the job is done or failed; raises TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                job = jobs.get_job(self._db.conn(), job_id)
                if job is None:
                    raise LookupError(f"unknown cortex job: {job_id}")
                if job.status in jobs.FINISHED:
                    return job
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"cortex job {job_id} still {job.status} "
                                       f"after {timeout} s")
                self._cond.wait(remaining)

    def subscribe(self, callback: Callable[[dict], None]) -> Callable[[], None]:
        """Calls `callback({job_id, persona_id, status, files, error})` as each job finishes.

        Returns a function that unsubscribes again.
        """
        return self._subscribers.subscribe(callback)

    def start(self, tick: Callable[[], object] | None = None,
              rest: float = FOREIGN_POLL_SECONDS) -> None:
        """Starts the background thread; `tick` (e.g. the idle scan) runs every
        `poll_seconds`. Between passes the loop rests `rest` seconds unless woken: a second
        where other processes queue jobs without a doorbell, longer where they ring it."""
        with self._cond:
            if self._thread is not None:
                return
            self._tick, self._stopping, self._rest = tick, False, rest
            self._thread = threading.Thread(target=self._loop, name="cortex-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stops the background thread after the job it is running (if any)."""
        with self._cond:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("Cortex worker still busy after %s s; its job resumes as "
                            "interrupted at the next start", timeout)

    @property
    def running(self) -> bool:
        """True while the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _plan(self, persona_id: str) -> tuple[int, int] | None:
        return self._update.plan_range(persona_id)

    def _run(self, job: CortexJob) -> CortexJob:
        try:
            if job.reason == "consolidate":
                result = self._update.consolidate(job.persona_id, job.id)
            elif job.reason == "learn":
                result = self._update.learning.run(job)
            else:
                result = self._update_job(job)
        except Exception:
            log.exception("Cortex update %s for %s crashed", job.id, job.persona_id)
            result = {"success": False, "error": "internal_error", "retryable": True,
                      "error_message": "The update failed unexpectedly; see the server log."}
        finished = jobs.finish_job(
            self._db.conn(), job.id, success=result["success"],
            files=result.get("files") or [], usage=result.get("usage"),
            summary=result.get("summary") or "", error=result.get("error"),
            error_message=result.get("error_message"), retryable=result.get("retryable", False),
            attempted=result.get("attempted"))
        if finished is not None and result.get("reconciled"):
            done = result["reconciled"]
            finished = jobs.note_reconciled(self._db.conn(), job.id, done.get("files") or [],
                                            done.get("summary") or "") or finished
        if finished is None:
            log.warning("Cortex job %s vanished while it ran (persona deleted?)", job.id)
            finished = job.model_copy(update={
                "status": "done" if result["success"] else "failed",
                "files": result.get("files") or [], "error": result.get("error")})
        self._announce(finished)
        self._tell()
        return finished

    def _tell(self) -> None:
        """Rings the other processes' news bells: a job finished (they announce it)."""
        if self._told is not None:
            self._told()

    def _update_job(self, job: CortexJob) -> dict[str, Any]:
        """Reconciliation first (when a retraction waits), then the job's new messages."""
        reconciled = None
        span = (job.message_from, job.message_to) \
            if job.message_from is not None and job.message_to is not None else None
        if self._update.reconciliation.pending(job.persona_id):
            reconciled = self._update.reconcile(job.persona_id, job.id,
                                                job_continues=span is not None)
            if not reconciled["success"] or span is None:
                return reconciled
        if span is None:
            return {"success": True, "summary": "Nothing new to remember."}
        result = self._update.run(job.persona_id, job_id=job.id, message_range=span)
        if reconciled is not None and reconciled.get("files"):
            result = {**result, "reconciled": reconciled}
        return result

    def announce_foreign(self) -> None:
        """Announces jobs that finished in another process since the last look."""
        for job in jobs.finished_since(self._db.conn(), self._watermark):
            self._watermark = max(self._watermark, job.finished_at or self._watermark)
            if job.id not in self._announced:
                self._announce(job)

    def _announce(self, job: CortexJob) -> None:
        self._announced.append(job.id)
        event = {"job_id": job.id, "persona_id": job.persona_id, "status": job.status,
                 "files": job.files, "error": job.error, "reason": job.reason}
        with self._cond:
            self._cond.notify_all()
        self._subscribers.notify(event)

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
            self._guarded(self.recover_interrupted)
            self._guarded(self.run_pending)
            self._guarded(self.announce_foreign)
            if self._tick is not None and time.monotonic() >= self._next_tick:
                self._next_tick = time.monotonic() + self._poll
                self._guarded(self._tick)
            with self._cond:
                if not self._wake and not self._stopping:
                    self._cond.wait(min(self._poll, self._rest))
                self._wake = False

    @staticmethod
    def _guarded(step: Callable[[], object]) -> None:
        try:
            step()
        except Exception:
            log.exception("Cortex worker step failed")

