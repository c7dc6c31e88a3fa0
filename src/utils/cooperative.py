"""Waits that must not stall a gevent worker, and the same code unchanged under threads.

Under gevent (`python -m src.app`) every connection of a worker process shares one OS thread: a
system call that blocks (a `flock` another process holds, SQLite sleeping in its busy handler)
would freeze them all, and if the holder is a greenlet of the same process, until a timeout.
`blocking()` runs such a call in gevent's thread pool and `pause()` sleeps cooperatively; with
plain threads (tests, the development server) both are the ordinary calls. Nothing here imports
gevent unless gunicorn's gevent worker already patched the process.

CPU-heavy steps (decoding a picture, listing a zip, writing a backup) would freeze the worker the
same way, for as long as they compute: `offload()` runs them in a pool of real threads of their
own (HEAVY_THREADS per process; Pillow, zlib and SQLite release the GIL while they work) behind a
bounded queue. A step that finds HEAVY_THREADS + HEAVY_QUEUE steps already admitted is refused at
once with `Busy` (a 503 with Retry-After), instead of waiting without bound. The bound holds under
plain threads too, so the behaviour is the same in tests.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
HEAVY_THREADS = 1
HEAVY_QUEUE = 8
RETRY_SECONDS = 2


class Busy(Exception):
    """Too many heavy steps are running or waiting in this process; try again shortly."""

    retry_after = RETRY_SECONDS


def patched() -> bool:
    """True when gevent has patched threading (a gevent worker process)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("threading")


def blocking(fn: Callable[..., T], *args) -> T:
    """Calls `fn(*args)`; under gevent in a pool thread, so other connections keep running."""
    if not patched():
        return fn(*args)
    import gevent
    return gevent.get_hub().threadpool.apply(fn, args)


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
        self._pool: Any = None
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
            if self._pool is None:
                from gevent.threadpool import ThreadPool
                self._pool = ThreadPool(self._threads)
            return self._pool.apply(fn, args)
        with self._turns:  # plain threads: at most HEAVY_THREADS steps compute at once
            return fn(*args)


_HEAVY = _HeavyPool(HEAVY_THREADS, HEAVY_QUEUE)


def offload(fn: Callable[..., T], *args) -> T:
    """Calls `fn(*args)` off the event loop (see the module docstring); raises `Busy` when
    HEAVY_THREADS + HEAVY_QUEUE steps are already running or waiting in this process. `fn` must
    not touch the app's SQLite connections or locks (they belong to the calling thread)."""
    return _HEAVY.run(fn, args)
