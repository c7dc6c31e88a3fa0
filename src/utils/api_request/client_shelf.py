"""SDK clients lent one per streaming reply, so a burst of replies does not probe every kept
connection on each request (issue #23).

One SDK client keeps one HTTP connection pool. Each time a request starts, and each time a
response is closed, that pool checks every idle connection it keeps for a dropped peer, with a
zero-timeout `poll` per connection (under gevent, about 23 µs each, in Python). With one client
for every reply, a burst of N replies leaves N idle connections, and the next burst pays about
N probes per reply: at 32–50 streams 0.4–0.6 ms of a turn's ~6 ms.

The shelf keeps instead one SDK client per reply in flight, lent for the stream and put back when
it ends (last in, first out), each with the one connection it used last: a request probes that
one. Clients are built for the shelf's key and URL only; a changed key or URL gets a new shelf
(`ApiClient`) and the old one is retired: its streams in flight finish on their clients, which
are closed when they come back. Closing the `ApiClient` closes every client, lent or not, as
closing the one shared client did. Building one
costs about 0.2 ms: every HTTP client shares one TLS context (`sdk.shared_tls_context`), which is
what took the 26 ms of building an SDK client.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class ClientShelf:
    """Idle SDK clients for one key and URL, lent one per stream."""

    IDLE = 64  # clients kept after a burst (each with its idle connection)

    def __init__(self, build: Callable[[], Any], keep: int = IDLE):
        self._build, self._keep = build, keep
        self._idle: list[Any] = []
        self._lent: dict[int, Any] = {}  # by id(): the clients streaming now
        self._aborts: dict[int, Callable[[], None]] = {}  # by id(): how to break off each stream
        self._lock = threading.Lock()
        self._retired = False
        self._closed = False
        # A shelf dropped unclosed (its ApiClient was never closed) closes its clients at once:
        # an SDK client is a reference cycle, and the cycle collector may finalize a kept
        # connection's socket before the client that would close it.
        weakref.finalize(self, _close_each, self._idle, self._lent)

    @contextmanager
    def lend(self) -> Iterator[Any]:
        """A client used by no other stream until the block ends."""
        with self._lock:
            client = self._idle.pop() if self._idle else None
        client = client or self._build()
        with self._lock:
            self._lent[id(client)] = client
        try:
            yield client
        finally:
            self._put_back(client)

    def abort_on_close(self, client: Any, abort: Callable[[], None]) -> None:
        """`abort` breaks off the stream the lent `client` runs; `close` calls it before it
        closes the client, since closing a socket does not wake a thread blocked reading it
        (a closed shelf calls it at once)."""
        with self._lock:
            closed = self._closed
            if not closed:
                self._aborts[id(client)] = abort
        if closed:
            abort()

    def _put_back(self, client: Any) -> None:
        with self._lock:
            self._lent.pop(id(client), None)
            self._aborts.pop(id(client), None)
            if not self._retired and len(self._idle) < self._keep:
                self._idle.append(client)
                return
        client.close()

    def idle(self) -> int:
        """How many clients wait on the shelf."""
        with self._lock:
            return len(self._idle)

    def retire(self) -> None:
        """Closes the idle clients; those lent out finish their streams and are closed when they
        come back (a new key or URL: requests in flight keep theirs)."""
        with self._lock:
            self._retired = True
            idle = list(self._idle)
            self._idle.clear()
        for client in idle:
            client.close()

    def close(self) -> None:
        """Closes every client, the lent ones too: their streams end with a connection error."""
        self.retire()
        with self._lock:
            self._closed = True
            lent, aborts = list(self._lent.values()), list(self._aborts.values())
        for abort in aborts:
            abort()
        for client in lent:
            client.close()


def _close_each(idle: list[Any], lent: dict[int, Any]) -> None:
    for client in [*idle, *lent.values()]:
        client.close()
