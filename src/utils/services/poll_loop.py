"""A background thread that repeats one step, resting between steps that found nothing to do.

Used for what crosses processes through SQLite: the memory process's title runners (a step
runs one queued title) and each chat worker's look at what the memory process finished (a
step announces cortex jobs and titles to this process's sockets).
"""
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
JOIN_SECONDS = 10.0


class PollLoop:
    """Runs `step()` until stopped; after a step that returns False it waits `interval`."""

    def __init__(self, step: Callable[[], bool], interval: float, name: str):
        self._step = step
        self._interval = interval
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Starts the thread (once)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = JOIN_SECONDS) -> None:
        """Stops after the step in progress (waiting at most `timeout` for it)."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("%s still busy after %s s", self._name, timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                busy = self._step()
            except Exception:
                log.exception("%s failed a step", self._name)
                busy = False
            if not busy:
                self._stop.wait(self._interval)
