"""CortexWorker: runs queued cortex updates, in a background thread or driven by tests.

Jobs live in SQLite (see `jobs.py`), so a queued job survives a restart and a job a restart
interrupted is marked failed. The worker never runs two jobs of one persona at once: the schema
allows one running job per persona and `claim_next_job` skips personas that have one.
With several worker processes on one data directory, a job may finish in another process: the
background loop also looks for jobs finished elsewhere (every second) and tells this process's
subscribers about them, so a WebSocket hears of every update of its personas.
"""
import logging
import threading
import time
from collections import deque
from typing import Callable

from ..storage.clock import utc_now
from . import jobs

log = logging.getLogger(__name__)
POLL_SECONDS = 30.0
FOREIGN_POLL_SECONDS = 1.0


class CortexWorker:
    """Executes cortex update jobs one at a time and tells subscribers when each one finishes."""

    def __init__(self, db, update_service, *, poll_seconds: float = POLL_SECONDS):
        self._db = db
        self._update = update_service
        self._poll = poll_seconds
        self._cond = threading.Condition()
        self._subscribers: list[Callable[[dict], None]] = []
        self._thread: threading.Thread | None = None
        self._tick: Callable[[], object] | None = None
        self._stopping = False
        self._wake = False
        self._announced: deque[str] = deque(maxlen=1000)
        self._watermark = utc_now()
        self._next_tick = 0.0

    def recover_interrupted(self) -> int:
        """At start-up: jobs a stopped process left `running` become failed (`interrupted`)."""
        count = jobs.fail_interrupted(self._db.conn())
        if count:
            log.warning("Marked %d interrupted cortex update job(s) as failed", count)
        return count

    def enqueue(self, persona_id: str, trigger: str = "manual") -> tuple[dict, bool]:
        """Queues an update (or returns the persona's queued one); True when created now."""
        job, created = jobs.enqueue_job(self._db.conn(), persona_id, trigger)
        if created:
            log.info("Queued cortex update %s for %s (%s)", job["id"], persona_id, trigger)
        with self._cond:
            self._wake = True
            self._cond.notify_all()
        return job, created

    def run_pending(self) -> list[dict]:
        """Runs queued jobs in this thread until none is left; returns the finished jobs."""
        finished = []
        while (job := jobs.claim_next_job(self._db.conn(), self._plan)) is not None:
            finished.append(self._run(job))
        return finished

    def wait_for_job(self, job_id: str, timeout: float = 10.0) -> dict:
        """Blocks until the job is done or failed; raises TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                job = jobs.get_job(self._db.conn(), job_id)
                if job is None:
                    raise LookupError(f"unknown cortex job: {job_id}")
                if job["status"] in jobs.FINISHED:
                    return job
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"cortex job {job_id} still {job['status']} "
                                       f"after {timeout} s")
                self._cond.wait(remaining)

    def subscribe(self, callback: Callable[[dict], None]) -> Callable[[], None]:
        """Calls `callback({job_id, persona_id, status, files, error})` as each job finishes.

        Returns a function that unsubscribes again.
        """
        with self._cond:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._cond:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)
        return unsubscribe

    def start(self, tick: Callable[[], object] | None = None) -> None:
        """Starts the background thread; `tick` (e.g. the idle scan) runs after every pass."""
        with self._cond:
            if self._thread is not None:
                return
            self._tick, self._stopping = tick, False
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

    def _plan(self, persona_id: str):
        return self._update.plan_range(persona_id)

    def _run(self, job: dict) -> dict:
        try:
            if job["message_from"] is None:
                result = {"success": True, "summary": "Nothing new to remember."}
            else:
                result = self._update.run(job["persona_id"], job_id=job["id"],
                                          message_range=(job["message_from"], job["message_to"]))
        except Exception:
            log.exception("Cortex update %s for %s crashed", job["id"], job["persona_id"])
            result = {"success": False, "error": "internal_error", "retryable": True,
                      "error_message": "The update failed unexpectedly; see the server log."}
        finished = jobs.finish_job(
            self._db.conn(), job["id"], success=result["success"],
            files=result.get("files") or [], usage=result.get("usage"),
            summary=result.get("summary") or "", error=result.get("error"),
            error_message=result.get("error_message"), retryable=result.get("retryable", False))
        if finished is None:
            log.warning("Cortex job %s vanished while it ran (persona deleted?)", job["id"])
            finished = {**job, "status": "done" if result["success"] else "failed",
                        "files": result.get("files") or [], "error": result.get("error")}
        self._announce(finished)
        return finished

    def _announce_foreign(self) -> None:
        """Announces jobs that finished in another process since the last look."""
        for job in jobs.finished_since(self._db.conn(), self._watermark):
            self._watermark = max(self._watermark, job["finished_at"])
            if job["id"] not in self._announced:
                self._announce(job)

    def _announce(self, job: dict) -> None:
        self._announced.append(job["id"])
        event = {"job_id": job["id"], "persona_id": job["persona_id"], "status": job["status"],
                 "files": job.get("files") or [], "error": job.get("error")}
        with self._cond:
            self._cond.notify_all()
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(event)
            except Exception:
                log.exception("A cortex job subscriber failed")

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
            self._guarded(self.run_pending)
            self._guarded(self._announce_foreign)
            if self._tick is not None and time.monotonic() >= self._next_tick:
                self._next_tick = time.monotonic() + self._poll
                self._guarded(self._tick)
            with self._cond:
                if not self._wake and not self._stopping:
                    self._cond.wait(min(self._poll, FOREIGN_POLL_SECONDS))
                self._wake = False

    @staticmethod
    def _guarded(step: Callable[[], object]) -> None:
        try:
            step()
        except Exception:
            log.exception("Cortex worker step failed")
