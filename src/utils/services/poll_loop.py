"""A background thread that repeats one step, resting between steps that found nothing to do.

Used for what crosses processes through SQLite: the memory process's title runners (a step
runs one queued title; they rest long and are woken by the doorbell a chat worker rings when it
queues one, `wake`) and each chat worker's look at what the memory process finished (a step
announces cortex jobs and titles to this process's sockets; woken by the news bell the
finishing process rings, utils/process_bells.py, and now and then without one).
"""
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
JOIN_SECONDS = 10.0


class PollLoop:
    """Runs `step()` until stopped; after a step that returns False it waits `interval`, or
    until `wake()`."""

    def __init__(self, step: Callable[[], bool], interval: float, name: str):
        self._step = step
        self._interval = interval
        self._name = name
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Starts the thread (once)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Runs the next step now (or right after the one in progress)."""
        self._wake.set()

    def stop(self, timeout: float = JOIN_SECONDS) -> None:
        """Stops after the step in progress (waiting at most `timeout` for it)."""
        thread, self._thread = self._thread, None
        self._stop.set()
        self._wake.set()
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("%s still busy after %s s", self._name, timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # a wake during the step makes the next one start at once
            try:
                busy = self._step()
            except Exception:
                log.exception("%s failed a step", self._name)
                busy = False
            if not busy:
                self._wake.wait(self._interval)
