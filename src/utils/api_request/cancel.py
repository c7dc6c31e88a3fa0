"""A cancel flag that acts at once: setting it runs the registered aborts in the setting thread.

`ApiClient.stream()` registers "close the upstream socket" on it, so a reader blocked waiting
for the next delta wakes immediately, with no watcher thread per stream.
"""
from __future__ import annotations

import threading
from collections.abc import Callable


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
