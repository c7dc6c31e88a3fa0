"""A total time budget for a few HTTP requests (the connection test), bounded by construction.

Per-request timeouts bound each wait, not the whole: a server that answers one byte just
inside every read timeout holds a request for ever. So every request made through
`Deadline.hooks()` gets its timeouts cut to what is left of the budget, and when the budget
runs out a timer shuts down every socket those requests opened, which wakes a read blocked on
it at once (as `sdk.abort_connection` does for a cancelled stream). The caller then sees a
transport error and reports `timeout` (`expired`).
"""
from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

log = logging.getLogger(__name__)
_PHASES = ("connect", "read", "write", "pool")


class Deadline:
    """`seconds` from now; pass `hooks()` as the HTTP client's event hooks, `close()` after."""

    def __init__(self, seconds: float):
        self.ends = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        """Seconds left (at least a few milliseconds, so a timeout is never zero or negative)."""
        return max(0.01, self.ends - time.monotonic())

    def hooks(self) -> dict[str, list]:
        """httpx event hooks that put every request of a client under this deadline."""
        return {"request": [self._on_request]}

    def close(self) -> None:
        """Stops the timer (the sockets belong to the clients, which close them)."""
        self._timer.cancel()
        if self._timer is not threading.current_thread():
            self._timer.join()

    def _on_request(self, request: Any) -> None:
        left = self.remaining()
        request.extensions["timeout"] = dict.fromkeys(_PHASES, left)
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: dict) -> None:
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)
        if sockets:
            log.info("connection test: time budget used up, %d connection(s) cut",
                     len(sockets))


def _shut(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass
