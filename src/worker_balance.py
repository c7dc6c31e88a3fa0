"""Balanced accepts between the gevent workers of one server (issue #23).

A WebSocket stays for its whole life with the worker that accepted it, and gunicorn's workers
accept from one shared listener, whoever wakes first: with the chat bench's pattern 32 sockets
fell 21 / 11 or 10 / 22 over 2 workers, and a burst over them queued on the fuller worker while
the other idled (docs/performance.md, "Worker model").

So the workers keep their counts in a table in shared memory (`Table`: an anonymous `mmap` the
master makes before it forks; a `Seat` per worker holding its pid, its open WebSockets, the
connections it accepted so far and when its WebSocket count last changed). A worker stores
its counts on every accept and when a WebSocket opens and closes
(`server.Worker.handle_request`): plain stores into the map, no system call and no lock, since
each seat has one writer (a stale read only misjudges one accept). Only
WebSockets count: they stay, while a request's connection (REST, an SSE reply, keep-alive) is
spread afresh by the listener on every accept; counting those too made the fuller worker step
aside for most of an SSE burst's connections, which then waited for a busy lighter worker (SSE
CPU per turn 1.10-1.14x, TTFT p50 +9-23 ms at 32-50 streams, measured).

Before it accepts, a worker holding at least `MARGIN` more WebSockets than the least-loaded
other worker steps aside (`BalancedServer`): it stops watching the listener for `PAUSE_SECONDS`
(a one-shot timer), and the other worker, woken by the same readable listener, takes the
connection. The margin keeps an odd count (17 / 16) from sending every request to one worker;
sockets opened one after another end at most `MARGIN` apart. If,
when the pause ends, that worker has accepted nothing meanwhile (stopped, stuck in a long
computation, its pool full), the waiting connection is accepted anyway: a worker that accepts
nothing delays a connection by one pause at most. An idle server runs no timer.

A worker steps aside only within `STEER_SECONDS` of a WebSocket count changing (a socket opened
or closed in any worker, or a worker took its seat): while sockets are being opened, the next
connection is likely one of them, and steering it keeps them balanced; once the counts rest,
what arrives are requests (REST, SSE replies), and an imbalance that no new WebSocket corrects
would otherwise send every one of them to the lighter worker for as long as it lasts. Measured
(twelfth session): with 26 / 24 sockets open and idle, every SSE reply of a burst went to one
worker while the other idled. The workers compare `time.monotonic_ns()` readings, which Linux
takes from one clock for every process.

Seats are handed out by gunicorn's server hooks in the master (`Table.hooks`): a new worker gets
the lowest seat no live worker holds (so a restarted worker takes its dead predecessor's), and a
reaped worker's seat is cleared. A worker takes its seat (writes its pid) when it starts
accepting and leaves it when it stops (pid 0: ignored by the others), so a booting or draining
worker is never waited for. One worker, or the gthread model: no table (`server.options`).
"""
from __future__ import annotations

import mmap
import os
import time
from collections.abc import Callable
from typing import Any, Protocol

from gevent.server import StreamServer
from gevent.socket import socket as GeventSocket
from gunicorn.arbiter import Arbiter

# How long a worker steps aside; the tests lengthen it (PERSONA_BALANCE_PAUSE) so that on a
# loaded machine the lighter worker always takes the connection before the pause ends.
PAUSE_SECONDS = float(os.environ.get("PERSONA_BALANCE_PAUSE") or 0.01)
MARGIN = 2  # WebSockets a worker may hold beyond the least-loaded other before it steps aside
# How long after a WebSocket count changed a worker steps aside (the tests set it).
STEER_SECONDS = float(os.environ.get("PERSONA_BALANCE_STEER") or 1.0)
PID, SOCKETS, ACCEPTED, CHANGED = range(4)
FIELDS = 4
CELL_BYTES = 8

# A seat of another worker as read when stepping aside: (its first cell, its accept count then).
Mark = tuple[int, int]


class Seated(Protocol):
    """A gunicorn worker that may hold a seat (`server.Worker`)."""

    seat: Seat | None


class Table:
    """The seats of one server's workers, in memory the master shares with every worker it
    forks."""

    def __init__(self, seats: int):
        self.seats = seats
        self._map = mmap.mmap(-1, seats * FIELDS * CELL_BYTES)  # MAP_SHARED: survives fork
        self.cells = memoryview(self._map).cast("q")

    def hooks(self) -> dict[str, Callable[[Arbiter, Any], None]]:
        """gunicorn settings that hand out and clear the seats (`worker_exit` too: gunicorn calls
        it instead of `child_exit` for a worker it finds gone when it signals it)."""
        return {"pre_fork": self.seat_worker, "child_exit": self.unseat_worker,
                "worker_exit": self.unseat_worker}

    def seat_worker(self, arbiter: Arbiter, worker: Seated) -> None:
        """In the master, before the fork: the lowest seat no live worker holds (none when all
        are taken: that worker accepts freely and the others do not see it)."""
        taken = {seat.index for seat in (getattr(w, "seat", None)
                                         for w in arbiter.WORKERS.values()) if seat}
        free = next((i for i in range(self.seats) if i not in taken), None)
        worker.seat = None if free is None else Seat(self, free)
        if worker.seat is not None:
            worker.seat.leave()

    def unseat_worker(self, arbiter: Arbiter, worker: Seated) -> None:
        """Once a worker was reaped (killed or not), in the master, or as it exits, in the
        worker: its seat is ignored."""
        seat = getattr(worker, "seat", None)
        if seat is not None:
            seat.leave()


class Seat:
    """One worker's seat: written by that worker only, read by the others."""

    def __init__(self, table: Table, index: int):
        self.index = index
        self._cells = table.cells
        self._base = index * FIELDS
        self._sockets = 0
        self._accepted = 0

    def take(self) -> None:
        """The worker accepts from now on: the others compare themselves with it."""
        self._cells[self._base + SOCKETS] = self._sockets
        self._cells[self._base + ACCEPTED] = self._accepted
        self._cells[self._base + CHANGED] = time.monotonic_ns()
        self._cells[self._base + PID] = os.getpid()

    def leave(self) -> None:
        """The worker accepts no more (or is gone): the others ignore the seat."""
        self._cells[self._base + PID] = 0

    def accepted(self) -> None:
        """A connection was accepted."""
        self._accepted += 1
        self._cells[self._base + ACCEPTED] = self._accepted

    def socket_opened(self) -> None:
        """A WebSocket began (its upgrade request arrived)."""
        self._sockets += 1
        self._cells[self._base + SOCKETS] = self._sockets
        self._cells[self._base + CHANGED] = time.monotonic_ns()

    def socket_closed(self) -> None:
        """A WebSocket ended."""
        self._sockets -= 1
        self._cells[self._base + SOCKETS] = self._sockets
        self._cells[self._base + CHANGED] = time.monotonic_ns()

    def lighter(self) -> Mark | None:
        """The least-loaded other accepting worker, if it holds at least `MARGIN` fewer
        WebSockets than this one."""
        cells, least, found = self._cells, self._sockets - MARGIN + 1, -1
        for base in range(0, len(cells), FIELDS):
            if base != self._base and cells[base + PID] and cells[base + SOCKETS] < least:
                least, found = cells[base + SOCKETS], base
        return None if found < 0 else (found, cells[found + ACCEPTED])

    def counts_changed_within(self, seconds: float) -> bool:
        """Whether any accepting worker's WebSocket count changed in the last `seconds`."""
        cells, since = self._cells, time.monotonic_ns() - int(seconds * 1e9)
        return any(cells[base + PID] and cells[base + CHANGED] > since
                   for base in range(0, len(cells), FIELDS))

    def moved(self, mark: Mark) -> bool:
        """Whether the worker of `mark` accepted a connection since the mark was read."""
        return self._cells[mark[0] + ACCEPTED] != mark[1]


class BalancedServer(StreamServer):
    """gevent's StreamServer that leaves an accept to a worker holding fewer WebSockets, and
    counts its worker's accepts on the seat."""

    def __init__(self, listener: GeventSocket, seat: Seat, **kwargs: Any):
        self._seat = seat
        self._pause: Any = None  # the one-shot timer while stepping aside
        super().__init__(listener, **kwargs)

    def _do_read(self) -> None:
        """The listener is readable: accept (gevent's own `_do_read`), unless another worker
        holds `MARGIN` fewer WebSockets and a count changed within `STEER_SECONDS`; then wait a
        pause for it to take the connection."""
        mark = self._seat.lighter()
        if mark is None or not self._seat.counts_changed_within(STEER_SECONDS):
            super()._do_read()  # type: ignore[misc]
            return
        self.stop_accepting()
        self._pause = self.loop.timer(PAUSE_SECONDS)
        self._pause.start(self._resume, mark)

    def _resume(self, mark: Mark) -> None:
        """Watches the listener again; accepts what still waits (if anything) when the lighter
        worker accepted nothing during the pause (the liveness rule). The fired timer is
        dropped, not closed: it is still running this callback."""
        self._pause = None
        if not self.started:
            return
        self.start_accepting()
        if not self._seat.moved(mark):
            super()._do_read()  # type: ignore[misc]

    def stop_accepting(self) -> None:
        """Also cancels a pause (the server is closing, or steps aside again)."""
        super().stop_accepting()
        if self._pause is not None:
            self._pause.close()
            self._pause = None

    def do_handle(self, *args: Any) -> None:
        """Counts the accepted connection before its greenlet is spawned."""
        self._seat.accepted()
        super().do_handle(*args)
