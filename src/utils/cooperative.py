"""Waits that must not stall a gevent worker, and the same code unchanged under threads.

Under gevent (`python -m src.app`) every connection of a worker process shares one OS thread: a
system call that blocks (a `flock` another process holds, SQLite sleeping in its busy handler)
would freeze them all, and if the holder is a greenlet of the same process, until a timeout.
`blocking()` runs such a call in gevent's thread pool and `pause()` sleeps cooperatively; with
plain threads (tests, the development server) both are the ordinary calls. Nothing here imports
gevent unless gunicorn's gevent worker already patched the process.

CPU-heavy steps (decoding a picture, listing a zip, writing a backup) would freeze the worker the
same way, for as long as they compute. `offload()` runs them, under gevent, in a child process of
the worker (`heavy_child.py`: its own GIL, so neither a decoder holding the GIL nor a thread
descheduled while holding it can stall the loop, as a thread of the worker could), one at a
time, behind a bounded queue. A step that finds HEAVY_THREADS + HEAVY_QUEUE
steps already admitted is refused at once with `Busy` (a 503 with Retry-After), instead of
waiting without bound. A step still running after HEAVY_SECONDS has its process killed (the
next step starts a new one) and raises `TooSlow` (a 503 `work_timeout`): input crafted to
compute for minutes holds the one heavy slot, and with it every upload, backup and export of
the worker, for that long at most. With plain threads (tests, the development server) steps
run in the calling thread, HEAVY_THREADS at a time, with the same bound and no time limit.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, TypeVarTuple

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
HEAVY_THREADS = 1
HEAVY_QUEUE = 8
RETRY_SECONDS = 2
# A heavy step's limit: far above the slowest legitimate one (a backup of a large data
# directory, docs/performance.md), and set low by the tests (PERSONA_HEAVY_SECONDS).
HEAVY_SECONDS = float(os.environ.get("PERSONA_HEAVY_SECONDS") or 300)


class Busy(Exception):
    """Too many heavy steps are running or waiting in this process; try again shortly."""

    retry_after = RETRY_SECONDS


class TooSlow(Exception):
    """A heavy step ran past HEAVY_SECONDS; its process was stopped."""

    seconds = HEAVY_SECONDS


def patched() -> bool:
    """True when gevent has patched threading (a gevent worker process)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("threading")


def blocking(fn: Callable[[*Ts], T], *args: *Ts) -> T:
    """Calls `fn(*args)`; under gevent in a pool thread, so other connections keep running."""
    if not patched():
        return fn(*args)
    import gevent
    return gevent.get_hub().threadpool.apply(fn, args)


class Task(Protocol):
    """Something started once and joined: a `threading.Thread`, or a gevent `Greenlet`."""

    def start(self) -> None: ...

    def join(self, timeout: float | None = None) -> Any: ...


def task(target: Callable[[], object], name: str) -> Task:
    """`target` to run concurrently once started: under gevent an `EagerGreenlet`, else a
    daemon thread named `name`."""
    if patched():
        return EagerGreenlet(target)
    return threading.Thread(target=target, name=name, daemon=True)


class EagerGreenlet:
    """Under gevent: `target` in a bare greenlet (a `threading.Thread` there is a greenlet plus
    the thread's bookkeeping, twice the CPU to start and end: a chat turn starts one) that
    `start()` runs at once, up to its first wait, before the starter goes on.

    A greenlet started the usual way waits behind everything already scheduled. When a burst
    of chat frames reaches a worker, every frame's greenlet is scheduled first, so each reply's
    request waited for all the burst's frames to be stored before any request went upstream;
    started eagerly, a reply sends its request (its first wait) before the next frame is read,
    and the first token of the burst's early replies comes that much sooner (issue #23). The
    starter is resumed by the hub's next round of callbacks, before any I/O is polled."""

    def __init__(self, target: Callable[[], object]):
        self._target = target
        self._done: Any = None

    def start(self) -> None:
        import gevent
        from gevent.event import Event
        from greenlet import getcurrent, greenlet

        self._done = Event()
        hub = gevent.get_hub()
        run = greenlet(self._run, parent=hub)
        starter = getcurrent()
        if starter is hub or not hub:  # in a hub callback, or the loop not yet running
            hub.loop.run_callback(run.switch)
            return
        hub.loop.run_callback(starter.switch)
        run.switch()

    def join(self, timeout: float | None = None) -> None:
        if self._done is not None:
            self._done.wait(timeout)

    def _run(self) -> None:
        try:
            self._target()
        except Exception:  # the hub is this greenlet's parent: nothing may reach it
            import logging
            logging.getLogger(__name__).exception("A task failed")
        finally:
            self._done.set()


def pause(seconds: float) -> None:
    """Sleeps `seconds` (cooperatively under gevent, where `time.sleep` is patched)."""
    time.sleep(seconds)


class _HeavyPool:
    """Admission (a bounded count of steps running or waiting) and the pool that runs them."""

    def __init__(self, threads: int, queue: int) -> None:
        self._threads = threads
        self._limit = threads + queue
        self._admitted = 0
        self._count_lock = threading.Lock()  # held for a count only: never across a switch
        self._child: _Child | None = None
        self._child_turns: Any = None
        self._turns = threading.BoundedSemaphore(threads)

    def run(self, fn: Callable[..., T], args: tuple) -> T:
        self._admit()
        try:
            return self._execute(fn, args)
        finally:
            with self._count_lock:
                self._admitted -= 1

    def _admit(self) -> None:
        with self._count_lock:
            if self._admitted >= self._limit:
                raise Busy()
            self._admitted += 1

    def _execute(self, fn: Callable[..., T], args: tuple) -> T:
        if patched():
            if self._child is None:  # gevent's own primitives: waiting for a turn yields
                from gevent.lock import BoundedSemaphore
                self._child, self._child_turns = _Child(), BoundedSemaphore(1)  # one pipe
            with self._child_turns:
                return self._child.call(fn, args)
        with self._turns:  # plain threads: at most HEAVY_THREADS steps compute at once
            return fn(*args)


class _Child:
    """The worker's heavy-work process (started at first use, restarted if it died)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None

    def call(self, fn: Callable[..., T], args: tuple) -> T:
        from gevent import Timeout

        from .heavy_child import read_message, write_message
        proc = self._running()
        requests, answers = proc.stdin, proc.stdout
        assert requests is not None and answers is not None
        try:
            with Timeout(HEAVY_SECONDS, TooSlow):
                write_message(requests, (fn.__module__, fn.__qualname__, args))
                answer: Any = read_message(answers)
        except TooSlow:
            self._stop(proc)
            raise
        except (OSError, EOFError, ValueError):
            self._stop(proc)
            raise RuntimeError("the heavy-work process ended during a request") from None
        status, value = answer
        if status == "error":
            raise value
        return value

    def _running(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            self._proc = subprocess.Popen([sys.executable, "-m", "src.utils.heavy_child"],
                                          cwd=root, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE)
        return self._proc

    def _stop(self, proc: subprocess.Popen) -> None:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        self._proc = None


_HEAVY = _HeavyPool(HEAVY_THREADS, HEAVY_QUEUE)


def offload(fn: Callable[[*Ts], T], *args: *Ts) -> T:
    """Calls `fn(*args)` off the event loop (see the module docstring); raises `Busy` when
    HEAVY_THREADS + HEAVY_QUEUE steps are already running or waiting in this process. `fn` must
    not touch the app's SQLite connections or locks (they belong to the calling thread)."""
    return _HEAVY.run(fn, args)
