"""A cancel flag that acts at once: setting it runs the registered aborts in the setting thread.

`ApiClient.stream()` registers "close the upstream socket" on it, so a reader blocked waiting
for the next delta wakes immediately, with no watcher thread per stream. A plain
`threading.Event` works too: then a watcher thread polls it (`watch_cancel`).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)


class CancelSignal(threading.Event):
    """A `threading.Event` whose `set()` also calls the callbacks registered with `on_set`."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._callbacks_lock = threading.Lock()

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Calls `callback` when the signal is set (at once if it already is); returns a remover."""
        with self._callbacks_lock:
            if not self.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def set(self) -> None:
        with self._callbacks_lock:
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._callbacks_lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


class Stopper(Protocol):
    """Ends a cancel watch once the stream is over."""

    def stop(self) -> None:
        """The stream is over; a later cancel no longer touches the connection."""


class _CancelWatcher:
    """Aborts the upstream response as soon as a plain Event is set, until told the stream is
    over (a thread polls the Event: a `threading.Event` has no hook)."""

    POLL_SECONDS = 0.05

    def __init__(self, cancel: threading.Event, abort: Callable[[], None]):
        self._cancel = cancel
        self._abort = abort
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stream-cancel", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._finished.is_set():
            if self._cancel.wait(self.POLL_SECONDS):
                if not self._finished.is_set():
                    log.info("stream cancelled: closing the upstream connection")
                    self._abort()
                return

    def stop(self) -> None:
        """The stream is over; the watcher thread ends within one poll."""
        self._finished.set()


class _CancelHook:
    """The same for a CancelSignal: the abort runs in the thread that sets it, no thread here."""

    def __init__(self, cancel: CancelSignal, abort: Callable[[], None]):
        self._lock = threading.Lock()
        self._finished = False
        self._abort_now = abort
        self._remove = cancel.on_set(self._abort)

    def _abort(self) -> None:
        with self._lock:
            if not self._finished:
                log.info("stream cancelled: closing the upstream connection")
                self._abort_now()

    def stop(self) -> None:
        """The stream is over; a later cancel no longer touches the connection."""
        with self._lock:
            self._finished = True
        self._remove()


def watch_cancel(cancel: threading.Event | None, abort: Callable[[], None]) -> Stopper | None:
    """Calls `abort` once `cancel` is set, until the returned watch is stopped."""
    if cancel is None:
        return None
    if isinstance(cancel, CancelSignal):
        return _CancelHook(cancel, abort)
    return _CancelWatcher(cancel, abort)


def cancelled(cancel: threading.Event | None) -> bool:
    """Whether `cancel` is given and set."""
    return cancel is not None and cancel.is_set()
