"""Waits that must not stall a gevent worker, and the same code unchanged under threads.

Under gevent (`python -m src.app`) every connection of a worker process shares one OS thread: a
system call that blocks (a `flock` another process holds, SQLite sleeping in its busy handler)
would freeze them all, and if the holder is a greenlet of the same process, until a timeout.
`blocking()` runs such a call in gevent's thread pool and `pause()` sleeps cooperatively; with
plain threads (tests, the development server) both are the ordinary calls. Nothing here imports
gevent unless gunicorn's gevent worker already patched the process.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


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
