"""The production server: gunicorn with gevent workers, so an open connection pins no thread.

An idle WebSocket or a slow client costs a greenlet (a few KiB), not an OS thread, so one worker
holds thousands of them. What a greenlet worker cannot do is wait in a blocking system call
without stalling every connection of the process; the app's few such waits (a `flock` held by
another process, SQLite's busy wait on another process's write lock) are handed to gevent's
thread pool (`utils/cooperative.py`). Connections that never finish their request headers are
cut after `HEADER_SECONDS` (gunicorn's keep-alive timeout, which its gevent worker applies to
every request's headers, the first one included), and one address may have at most `PENDING_PER_ADDRESS` such
connections per worker, so a client holding hundreds of half-open connections cannot fill the
worker's connection pool for everybody else (docs/security.md). A request line or headers over
gunicorn's limits are refused by gunicorn before Flask sees them; the worker answers those in the
app's JSON error shape (DESIGN §7) instead of gunicorn's HTML page. With more than one worker,
the workers balance their accepts (`worker_balance.py`): a WebSocket stays with the worker that
accepted it, so one holding 2 more open WebSockets than another leaves the next connection to it.
A worker tells the master it lives every `NOTICE_SECONDS` (gunicorn's every second, a wake that
cost each worker about 0.2 ms of CPU a second: issue #23); a signal wakes it at once, and it
ends with the master by Linux's parent-death signal (`parent_death.py`), not by a check on the
timer (where that signal is missing it keeps gunicorn's second).
"""
from __future__ import annotations

import collections
import json
import os
import socket
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import gevent
import gevent.select
from gevent.pool import Pool
from gevent.server import StreamServer
from gevent.socket import socket as GeventSocket
from gunicorn import util
from gunicorn.config import Config
from gunicorn.http import Request
from gunicorn.http.errors import LimitRequestHeaders, LimitRequestLine
from gunicorn.sock import ssl_context
from gunicorn.workers.ggevent import GeventWorker

from .parent_death import die_with_parent
from .worker_balance import BalancedServer, Seat, Table
from .worker_memory import release_heap

HEADER_SECONDS = 5  # also the keep-alive: an idle HTTP connection is closed after it
PENDING_PER_ADDRESS = 64
WORKER_CONNECTIONS = 4000
NOTICE_SECONDS = 10.0  # the master's timeout (`timeout`) is 120 s
THREADED = {"worker_class": "gthread", "threads": 64, "timeout": 120}  # the old model, to compare


def options(model: str = "gevent", header_seconds: int = HEADER_SECONDS,
            workers: int = 1) -> dict:
    """gunicorn settings for `PERSONA_SERVER_MODEL` (`gevent`, the default, or `gthread`),
    `PERSONA_HEADER_TIMEOUT` and `PERSONA_WORKERS`. Called in the master before it forks: with
    more than one gevent worker, the table that balances their accepts (`worker_balance.py`),
    with seats to spare for workers added later (gunicorn's TTIN)."""
    if model == "gthread":
        return THREADED
    settings: dict[str, Any] = {
        "worker_class": "src.server.Worker", "worker_connections": WORKER_CONNECTIONS,
        "keepalive": header_seconds, "timeout": 120, "graceful_timeout": 10}
    if workers > 1:
        settings.update(Table(2 * workers).hooks())
    return settings


# A peer or listener address as gunicorn hands it over (TCP pair, Unix path, descriptor).
Address = str | int | tuple[str, int]


class Worker(GeventWorker):
    """gunicorn's gevent worker with a cap on connections per address still sending headers,
    and accepts balanced with the server's other workers (`seat`, given by the master:
    `worker_balance.py`)."""

    seat: Seat | None = None

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._pending: collections.Counter = collections.Counter()
        self._waiting: set[int] = set()
        self._release_db: Callable[[], None] = lambda: None

    def run(self) -> None:
        """Serves; with `PERSONA_BLOCKING_REPORT` set, under gevent's blocking monitor
        (`blocking_report.py`), started once the worker is about to accept: the app's build
        and the boot's full garbage collection (`settle_heap`, over 0.1 s of CPU) stall no
        connection, and on a loaded machine that collection alone was reported as a block.
        gevent's resolver is made here too: made on the first upstream request, it imported its
        modules inside the event loop (0.18 s of CPU, 0.5 s stalled on a loaded machine); and
        the SDK's TLS context and lazily imported modules (`api_request.sdk.warm_up`: the first
        turn after a boot stalled its worker 50-80 ms)."""
        self._tune_memory()
        self._pool_connections()
        path = os.environ.get("PERSONA_BLOCKING_REPORT")
        stop_monitor: Callable[[], None] | None = None
        if path:
            from .blocking_report import install
            stop_monitor = install(path)
        try:
            self._serve()
        finally:
            if stop_monitor is not None:
                stop_monitor()
            release_heap()

    def _tune_memory(self) -> None:
        """The worker's heap settings (`worker_memory.py`): fewer malloc arenas, the boot's
        objects frozen, and the heap trimmed once no reply has streamed for a second if it
        grew since the last trim (the trimmer sleeps until the last reply ends)."""
        from flask import Flask

        from .utils.api_request.sdk import warm_up  # here: the master never loads the SDK
        from .utils.provider import get_chat_service, get_db
        from .worker_memory import IdleTrim, limit_arenas, settle_heap
        limit_arenas()
        gevent.get_hub().resolver  # noqa: B018 (made for its imports: see `run`)
        if isinstance(self.wsgi, Flask):  # else the app failed to build: gunicorn's error app
            # likewise, before the heap is settled, so what it imports is frozen
            warm_up(_provider(self.wsgi) == "openai_compatible")
            hub = get_chat_service(self.wsgi).hub
            trimmer = IdleTrim(hub.busy, release=get_db(self.wsgi).shrink_idle)
            hub.on_start(trimmer.poke)
            hub.on_idle(trimmer.idle)
            trimmer.start()
        settle_heap()

    def _pool_connections(self) -> None:
        """Requests hand their SQLite connection back when done (`handle_request`)."""
        from flask import Flask

        from .utils.provider import get_db
        if isinstance(self.wsgi, Flask):
            self._release_db = get_db(self.wsgi).close_thread

    def _serve(self) -> None:
        """gunicorn's `GeventWorker.run`, with a `BalancedServer` per listener when the worker
        has a seat (gunicorn's own builds a plain StreamServer inline, with no hook for
        another class). The seat is held while the worker accepts."""
        ssl_args = {"ssl_context": ssl_context(self.cfg)} if self.cfg.is_ssl else {}
        servers = [self._server(listener, ssl_args) for listener in self.sockets]
        for server in servers:
            server.start()
        if self.seat is not None:
            self.seat.take()
        rest = NOTICE_SECONDS if die_with_parent() else 1.0
        while self.alive:
            self.notify()  # also ends the worker if the master is already gone
            self._rest(rest)
        if self.seat is not None:
            self.seat.leave()
        self._drain(servers)

    def _rest(self, seconds: float) -> None:
        """Waits `seconds`, or until a signal arrives: gunicorn has every signal write a byte
        to its pipe (`set_wakeup_fd`), which nothing else here reads. The handler has run (it
        set `alive`) once the hub has had a turn."""
        ready, _, _ = gevent.select.select([self.PIPE[0]], [], [], seconds)
        if ready:
            try:
                while os.read(self.PIPE[0], 4096):
                    pass
            except BlockingIOError:
                pass
            gevent.sleep(0)

    def _server(self, listener: GeventSocket, ssl_args: dict[str, Any]) -> StreamServer:
        listener.setblocking(True)
        pool, handle = Pool(self.worker_connections), partial(self.handle, listener)
        server = StreamServer(listener, handle=handle, spawn=pool, **ssl_args) \
            if self.seat is None else \
            BalancedServer(listener, self.seat, handle=handle, spawn=pool, **ssl_args)
        if self.cfg.workers > 1:
            server.max_accept = 1
        return server

    def _drain(self, servers: list[StreamServer]) -> None:
        """gunicorn's graceful stop: no more accepts, then the open connections get up to the
        graceful timeout to end before they are killed."""
        try:
            for server in servers:
                server.close()
            started = time.time()
            while time.time() - started <= self.cfg.graceful_timeout:
                if all(s.pool is None or s.pool.free_count() == s.pool.size for s in servers):
                    return
                self.notify()
                gevent.sleep(1.0)
            self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
            for server in servers:
                server.stop(timeout=1)
        except Exception:  # as gunicorn's: the worker exits either way
            self.log.debug("Stopping the servers failed", exc_info=True)

    def handle(self, listener: GeventSocket, client: GeventSocket, addr: Address) -> None:
        """Refuses a connection at once when its address already has too many half-open ones."""
        host = addr[0] if isinstance(addr, tuple) else str(addr)
        if self._pending[host] >= PENDING_PER_ADDRESS:
            self.log.warning("Too many connections still sending headers from %s", host)
            client.close()
            return
        key = id(client)
        self._pending[host] += 1
        self._waiting.add(key)
        try:
            super().handle(listener, client, addr)
        finally:
            self._settle(host, key)

    def handle_request(self, listener_name: Address, req: Request, sock: GeventSocket,
                       addr: Address) -> bool:
        """The headers are complete: the connection no longer counts as half-open. Once the
        response is written (a streamed one to its end, a WebSocket closed), the request's
        SQLite connection goes back to the pool: a request's greenlet otherwise dropped it,
        and the next request opened a new one (about 1.5 ms of CPU with its PRAGMAs)."""
        self._settle(addr[0] if isinstance(addr, tuple) else str(addr), id(sock))
        seat = self.seat if self.seat is not None and _upgrade(req) else None
        if seat is not None:
            seat.socket_opened()
        try:
            return super().handle_request(listener_name, req, sock, addr)
        finally:
            if seat is not None:
                seat.socket_closed()
            self._release_db()

    def handle_error(self, req: Request | None, client: socket.socket, addr: Address,
                     exc: BaseException) -> None:
        """A request line or headers over the limits get our JSON error; anything else gunicorn's
        own answer."""
        refusal = _refusal(exc, self.cfg)
        if refusal is None:
            return super().handle_error(req, client, addr, exc)
        status, reason, code, message = refusal
        host = addr[0] if isinstance(addr, tuple) else str(addr)
        self.log.warning("Refused a request from %s: %s", host, code)
        try:
            util.write_nonblock(client, _json_error(status, reason, code, message))
        except OSError:
            self.log.debug("Failed to send the %d answer to %s", status, host)
        return None

    def _settle(self, host: str, key: int) -> None:
        if key in self._waiting:
            self._waiting.discard(key)
            self._pending[host] -= 1
            if self._pending[host] <= 0:
                del self._pending[host]


def _provider(app: Any) -> str | None:
    """The provider the settings name now, read at a worker's boot for its warm-up (None when
    they cannot be read: the warm-up is a nicety, the worker boots either way). The boot's
    connection is handed back: the main greenlet serves no request."""
    from .utils.provider import get_db, get_settings_service
    try:
        return get_settings_service(app).values().provider
    except Exception:
        return None
    finally:
        get_db(app).close_thread()


def _upgrade(req: Request) -> bool:
    """A WebSocket's opening request (it stays with this worker: `worker_balance.py`)."""
    return any(name == "UPGRADE" and value.lower() == "websocket" for name, value in req.headers)


def _refusal(exc: BaseException, cfg: Config) -> tuple[int, str, str, str] | None:
    """(status, reason, code, message) for a request gunicorn refuses for its size, else None.
    The message names the limit, never the request's own text."""
    if isinstance(exc, LimitRequestLine):
        message = (f"The request line (method, path and query) is longer than "
                   f"{cfg.limit_request_line} bytes.")
        return 414, "URI Too Long", "uri_too_long", message
    if isinstance(exc, LimitRequestHeaders):
        message = (f"The request headers are too large: at most {cfg.limit_request_fields} "
                   f"fields of at most {cfg.limit_request_field_size} bytes each.")
        return 431, "Request Header Fields Too Large", "headers_too_large", message
    return None


def _json_error(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole HTTP response carrying `{"error": {"code", "message"}}`; the connection closes
    (the rest of the request was never read)."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body
