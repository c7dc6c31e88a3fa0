"""A worker's heap: collected less often, and given back to the system after a burst.

Three knobs, all applied in a gunicorn worker once its app is built (`server.Worker.run`):
- `settle_heap`: the objects alive after the boot (modules, the SDK's classes, the app) are
  moved out of the garbage collector's reach with `gc.freeze()`, and generation 0 is collected
  every `GEN0_THRESHOLD` allocations instead of 700, so a chat turn's many short-lived objects
  do not trigger collections that walk the whole heap (issue #23: −0.2 to −0.35 ms per turn).
- `limit_arenas`: glibc makes a malloc arena per thread that allocates concurrently (gevent's
  thread pool for `flock` waits, the heavy child's reader); two are enough for a process that
  runs Python on one thread, and fewer arenas keep less freed memory.
- `IdleTrim`: once the worker has had no reply streaming for `IDLE_SECONDS` after a busy
  spell, and its resident heap grew by `TRIM_GROWTH` since the last trim, the app frees what
  it caches (the idle SQLite connections' page caches), a full collection frees the spell's
  reference cycles (which the raised threshold lets wait), and `malloc_trim(0)` gives glibc's
  free heap back: CPython's allocator hands emptied arenas to glibc, which keeps them until
  asked. It wakes twice a spell, when the last reply ends (`idle`, `GenerationHub.on_idle`) and
  `IDLE_SECONDS` later unless a reply started meanwhile (`poke`, `GenerationHub.on_start`). It
  looked twice a second during a spell before, and a one-stream chat turn paid for those wakes
  (issue #23, docs/performance.md "Ninth session"). A trim costs a worker 1-2 ms after one
  person's turn and gave nothing back there (its heap grew by less than a MiB), so the growth
  is read first (`/proc/self/statm`, a few microseconds); a burst of 50 streams grows each
  worker's heap by 2-3 MiB and is trimmed as before ("Eleventh session").
Every call is a no-op where glibc's functions are missing (another libc).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
GEN0_THRESHOLD = 50_000
ARENAS = 2
M_ARENA_MAX = -8
IDLE_SECONDS = 1.0
TRIM_GROWTH = 1 << 20  # bytes of resident heap gained since the last trim that make one worth it


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _libc()


def settle_heap() -> None:
    """Freezes what the boot left alive and makes generation-0 collections rarer."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)


def release_heap() -> None:
    """Undoes the freeze when the worker stops serving: frozen objects would otherwise be
    finalised only at interpreter teardown, after gevent's hub is gone (logging's handler
    references then fail on gevent's `get_ident`)."""
    gc.unfreeze()
    gc.collect()


def limit_arenas() -> None:
    """At most `ARENAS` glibc malloc arenas for this process."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(M_ARENA_MAX, ARENAS)


def resident_heap() -> int | None:
    """Bytes of this process's anonymous resident memory (resident minus file-backed and
    shared pages: the heap, stacks and the like), or None where /proc cannot tell."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            fields = statm.read().split()
        return (int(fields[1]) - int(fields[2])) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return None


def trim() -> bool:
    """Gives glibc's free heap back to the system; True if it had any to give."""
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    return bool(malloc_trim(0)) if malloc_trim is not None else False


class IdleTrim:
    """Trims the heap once `busy()` has been false for `IDLE_SECONDS` since the last reply
    ended (`idle`), after `release()` (which frees what the app itself keeps, e.g. SQLite page
    caches), if the resident heap grew by `growth` bytes since the last trim (0: always); a
    reply started meanwhile (`poke`) puts it off until the next end."""

    def __init__(self, busy: Callable[[], bool], idle_seconds: float = IDLE_SECONDS,
                 release: Callable[[], None] = lambda: None, growth: int = TRIM_GROWTH):
        self._busy = busy
        self._release = release
        self._idle_seconds = idle_seconds
        self._growth = growth
        self._since: int | None = None  # the resident heap after the last trim (or the start)
        self._stop = threading.Event()
        self._started = threading.Event()  # a reply started since the last end
        self._idle = threading.Event()  # the last reply ended, not yet looked at
        self._thread = threading.Thread(target=self._run, name="idle-trim", daemon=True)
        self.trims = 0
        self.skips = 0  # spells that ended with too little grown to be worth a trim
        self.trimmed = threading.Event()  # set after each trim
        self.decided = threading.Event()  # set after each trim or skip

    def start(self) -> None:
        """Starts watching (a daemon thread: a greenlet under gevent)."""
        self._since = resident_heap()
        self._thread.start()

    def poke(self) -> None:
        """A reply started: the spell goes on."""
        self._idle.clear()
        self._started.set()

    def idle(self) -> None:
        """The last reply ended: trim in `idle_seconds` unless one starts before."""
        self._idle.set()

    def stop(self) -> None:
        """Stops watching."""
        self._stop.set()
        self._idle.set()
        self._started.set()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            self._idle.wait()
            if self._stop.is_set():
                return
            self._idle.clear()
            self._started.clear()
            if self._started.wait(self._idle_seconds) or self._busy():
                continue  # a reply started: its end says when to look again
            if self._stop.is_set():
                return
            if self._grown():
                self._trim()
            else:
                self.skips += 1
            self.decided.set()

    def _grown(self) -> bool:
        """Whether the heap grew enough since the last trim for a trim to be worth its CPU."""
        if self._growth <= 0 or self._since is None:
            return True
        now = resident_heap()
        return now is None or now - self._since >= self._growth

    def _trim(self) -> None:
        try:
            self._release()
        except Exception:
            log.exception("Could not release memory after a busy spell")
        gc.collect()  # the spell's cycles: with generation 0 at 50,000 they may wait
        trim()
        self._since = resident_heap()
        self.trims += 1
        self.trimmed.set()
