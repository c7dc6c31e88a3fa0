"""The gunicorn master's side of the memory process (`memory_process.py`): start, restart, stop.

gunicorn supervises its workers only; the memory process is one more child of the master,
kept by an `Arbiter` subclass through the master's own loop (no thread in the master, which
forks workers): it is started with the server, looked at on every pass of the loop (at once on
SIGCHLD) and started again after it died, waiting longer after each quick death
(RESTART_DELAYS) so a process that cannot start does not spin; it is stopped with
the server (SIGTERM, then SIGKILL after gunicorn's graceful timeout). It ends by itself when
the master dies, however the master dies (`parent_death.py`).

Imports stay light: this runs in the master, which never builds the app.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gunicorn.arbiter import Arbiter

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
STEADY_SECONDS = 60.0  # a process that lived this long died of something new: restart at once
PASS_SECONDS = 10.0  # the master's loop between signals (gunicorn's: 1 s)


class MemoryProcess:
    """One `python -m src.memory_process` child of this process, started again when it dies."""

    def __init__(self, command: list[str] | None = None):
        self._command = command or [sys.executable, "-m", "src.memory_process",
                                    "--parent", str(os.getpid())]
        self.proc: subprocess.Popen | None = None
        self._started = 0.0
        self._failures = 0
        self._not_before = 0.0
        self._stopping = False

    def start(self) -> None:
        """Starts the child now (its output goes where the master's goes)."""
        self._command[-1] = str(os.getpid())  # the master's pid, also after a re-exec
        self.proc = subprocess.Popen(self._command, cwd=ROOT, stdin=subprocess.DEVNULL)
        self._started = time.monotonic()
        log.info("Memory process started (pid %d)", self.proc.pid)

    def keep(self) -> None:
        """Collects a child that ended and starts the next one when its delay has passed."""
        if self._stopping:
            return
        if self.proc is not None and self.proc.poll() is not None:
            self._ended()
        if self.proc is None and time.monotonic() >= self._not_before:
            self.start()

    def terminate(self) -> None:
        """Asks the child to stop (SIGTERM) and starts no other."""
        self._stopping = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout: float) -> None:
        """SIGTERM, then SIGKILL if the child is still there after `timeout` seconds."""
        self.terminate()
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("Memory process %d did not stop within %s s: killed", proc.pid,
                            timeout)
                proc.kill()
                proc.wait()
        self.proc = None

    def due_in(self) -> float:
        """Seconds until the next start is due (`inf` while a child runs or after `terminate`)."""
        if self._stopping or self.proc is not None:
            return float("inf")
        return max(0.0, self._not_before - time.monotonic())

    def _ended(self) -> None:
        assert self.proc is not None
        code, pid, lived = self.proc.returncode, self.proc.pid, time.monotonic() - self._started
        self.proc = None
        self._failures = 0 if lived >= STEADY_SECONDS else self._failures + 1
        delay = RESTART_DELAYS[min(self._failures, len(RESTART_DELAYS)) - 1] \
            if self._failures else 0.0
        self._not_before = time.monotonic() + delay
        log.warning("Memory process %d ended (status %s) after %.0f s; starting another in "
                    "%.1f s", pid, code, lived, delay)


class SupervisingArbiter(Arbiter):
    """gunicorn's master, also keeping the memory process alive for as long as it runs."""

    def __init__(self, app: Any, memory: MemoryProcess | None = None):
        super().__init__(app)
        self.memory = memory or MemoryProcess()

    def start(self) -> None:
        """After the master's own start (listeners bound), before the first workers."""
        super().start()
        self.memory.start()

    def manage_workers(self) -> None:
        """Every pass of the master's loop: the workers, then the memory process."""
        super().manage_workers()
        self.memory.keep()

    def wait_for_signals(self, timeout: float | None = 1.0) -> list[int]:
        """Waits for a signal up to PASS_SECONDS, or until the memory process is due to start
        again, instead of gunicorn's second: everything the master does between signals (a
        worker that stopped telling it lives, after `timeout`, 120 s) can wait that long, and
        each pass woke the idle server's master (issue #23). Signals (a child's end, a stop,
        TTIN/TTOU) still end the wait at once."""
        return super().wait_for_signals(min(PASS_SECONDS, self.memory.due_in()))

    def handle_chld(self) -> None:
        """Reaps the memory process by its pid before gunicorn reaps any child it finds."""
        self.memory.keep()
        super().handle_chld()

    def stop(self, graceful: bool = True) -> None:
        """Stops the workers and the memory process together (both get SIGTERM first)."""
        self.memory.terminate()
        super().stop(graceful)
        self.memory.stop(self.cfg.graceful_timeout)
