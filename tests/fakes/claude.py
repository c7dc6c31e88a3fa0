"""FakeClaude: a local HTTP server speaking Anthropic's Messages API, for the real SDK.

    fake = FakeClaude()                  # or the `claude` fixture; fake.url -> base_url
    fake.enqueue(replies.text("Hi"), "plain str = text reply")   # FIFO, one per POST /v1/messages
    fake.default = replies.scripted(fn)  # if the queue is empty (else 500 "fake: nothing scripted")
    fake.requests / fake.last            # RecordedRequest(path, headers, body, stream, ...)
    fake.wait_for_requests(n) / fake.wait_for_disconnect(index=i)   # AssertionError on timeout
    fake.disconnects, fake.errors, fake.pending, fake.close()

Requests are checked like the API does (400 invalid_request_error; a refused request is recorded
with `rejected` set and consumes no scripted reply). Also answers /v1/models and
`POST /v1/messages/count_tokens` (the real wire format: a Messages body without `max_tokens` in,
`{"input_tokens": n}` out) with a deterministic rule: each tool, system block and message
content block, with its message's role, is serialised as compact JSON; n is the total length
of those strings // 4 (at least 1), plus 3 (`usage.count_tokens`). `fake.count_failure` set to
a status makes count_tokens answer that error instead, `fake.count_delay` (seconds) answer late
(fallback tests), `fake.count_gate` (an Event) answer only once it is set.
"""
import selectors
import socket
import socketserver
import threading
from collections import deque
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Self

from tests.fakes import replies
from tests.fakes.exchange import Exchange, Handler
from tests.fakes.usage import PromptCache, count_tokens
from tests.fakes.validation import problem

__all__ = ["FakeClaude", "RecordedRequest", "replies"]

MODELS = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5")
NOTHING_SCRIPTED = "fake: nothing scripted"
WAIT_SECONDS = 20.0  # the waits' default: it only bounds a failure (a loaded machine is slow)


@dataclass
class RecordedRequest:
    """What the fake received: path, lower-cased headers, parsed JSON body, stream flag, and the
    body's bytes exactly as they arrived (`raw`)."""

    path: str
    headers: dict
    body: dict
    stream: bool
    method: str = "POST"
    index: int = 0
    request_id: str = ""
    rejected: str | None = None
    raw: bytes = b""
    peer: int = 0  # the client's port: requests with the same one came on one connection

    @property
    def messages(self) -> list:
        """The `messages` sent (the history)."""
        return self.body.get("messages") or []

    @property
    def system(self):
        """The `system` sent (str, list of blocks, or None)."""
        return self.body.get("system")

    @property
    def tools(self) -> list:
        """The `tools` sent."""
        return self.body.get("tools") or []


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class FakeClaude:
    """The Messages API on 127.0.0.1:<free port>, in a daemon thread; close() stops it.

    `validate=False` skips the request checks; `api_key` makes any other key a 401.
    """

    record_type = RecordedRequest

    def __init__(self, validate: bool = True, api_key: str | None = None, host: str = "127.0.0.1"):
        self.default = None
        self.validate = validate
        self.count_failure: int | None = None
        self.count_delay = 0.0
        self.count_gate: threading.Event | None = None
        self.api_key = api_key
        self.errors: list[BaseException] = []
        self._queue: deque = deque()
        self._requests: list[RecordedRequest] = []
        self._disconnects: list[int] = []
        self._cache = PromptCache()
        self._connections: set = set()
        self._cond = threading.Condition()
        self._closing = threading.Event()
        self._server = _Server((host, 0), Handler)
        self._server.fake = self
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._accept, name=f"fake-claude-{self.port}",
                                        daemon=True)
        self._thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def enqueue(self, *items) -> None:
        """Script the next answers (FIFO; a str means replies.text(str))."""
        batch = [replies.text(item) if isinstance(item, str) else item for item in items]
        for item in batch:
            if not isinstance(item, replies.Reply):
                raise TypeError(f"fake: {item!r} is not a reply")
        with self._cond:
            self._queue.extend(batch)

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._cond:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a snapshot)."""
        with self._cond:
            return list(self._requests)

    @property
    def last(self) -> RecordedRequest:
        """The most recent request."""
        with self._cond:
            return self._requests[-1]

    @property
    def disconnects(self) -> list[int]:
        """Indexes of requests whose client left before the answer was complete."""
        with self._cond:
            return list(self._disconnects)

    def wait_for_open_connections(self, n: int, timeout: float = WAIT_SECONDS) -> None:
        """Block until exactly `n` client connections are open; AssertionError after `timeout`."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._connections) == n, timeout):
                raise AssertionError(f"fake: {len(self._connections)} connections open, "
                                     f"not {n}, after {timeout}s")

    def wait_for_requests(self, n: int, timeout: float = WAIT_SECONDS) -> list[RecordedRequest]:
        """Block until `n` requests arrived; AssertionError after `timeout` seconds."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise AssertionError(f"fake: {len(self._requests)} of {n} requests in {timeout}s")
            return list(self._requests)

    def wait_for_disconnect(self, timeout: float = WAIT_SECONDS, index: int | None = None) -> bool:
        """Block until a client left mid-answer (request `index`, or any); AssertionError after
        `timeout`."""
        def seen() -> bool:
            return bool(self._disconnects) if index is None else index in self._disconnects

        with self._cond:
            if not self._cond.wait_for(seen, timeout):
                raise AssertionError(f"fake: no client disconnect within {timeout}s")
            return True

    def close(self) -> None:
        """Stop serving: release waiting replies, close open connections, join threads."""
        with self._cond:
            if self._closing.is_set():
                return
            self._closing.set()
            connections = list(self._connections)
        self._wake_w.send(b"x")
        self._thread.join()
        for connection in connections:
            _shutdown(connection)
        self._server.server_close()
        self._wake_r.close()
        self._wake_w.close()

    def _accept(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._server.socket, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self._server.socket and not self._closing.is_set():
                        self._server.handle_request()

    def _track(self, connection: socket.socket, alive: bool) -> None:
        with self._cond:
            if alive:
                self._connections.add(connection)
                if self._closing.is_set():
                    _shutdown(connection)
            else:
                self._connections.discard(connection)
            self._cond.notify_all()

    def _disconnected(self, index: int) -> None:
        with self._cond:
            if index not in self._disconnects:
                self._disconnects.append(index)
            self._cond.notify_all()

    def _serve(self, ex: Exchange) -> None:
        body = ex.body if isinstance(ex.body, dict) else {}
        record = self.record_type(ex.path, ex.headers, body, ex.stream, ex.method,
                                 request_id=ex.request_id, raw=ex.raw, peer=ex.peer)
        with self._cond:
            record.index = ex.index = len(self._requests)
            self._requests.append(record)
            self._cond.notify_all()
        ex.on_disconnect = self._disconnected
        try:
            self._route(ex, record)
        except Exception as error:  # a broken script: answer 500, keep it for the test to see
            with self._cond:
                self.errors.append(error)
            record.rejected = f"fake: {type(error).__name__}: {error}"
            if ex.started:
                ex.drop()
            else:
                ex.send_error(500, "api_error", record.rejected)

    def _route(self, ex: Exchange, record: RecordedRequest) -> None:
        route = (ex.method, ex.path)
        if route == ("POST", "/v1/messages"):
            self._messages(ex, record)
        elif route == ("POST", "/v1/messages/count_tokens"):
            self._count_tokens(ex, record)
        elif route == ("GET", "/v1/models"):
            data = [_model(name) for name in MODELS]
            ex.send_json(200, {"data": data, "has_more": False,
                               "first_id": MODELS[0], "last_id": MODELS[-1]})
        elif ex.method == "GET" and ex.path.startswith("/v1/models/"):
            ex.send_json(200, _model(ex.path.rsplit("/", 1)[1]))
        else:
            record.rejected = f"fake: no route {ex.method} {ex.path}"
            ex.send_error(404, "not_found_error", "Not found")

    def _refuse(self, ex: Exchange, record: RecordedRequest, body_check) -> bool:
        """Answer auth / version / validation failures like the API; True if refused."""
        headers = ex.headers
        bearer = headers.get("authorization", "")
        key = headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else None)
        if not key:
            status, kind, message = 401, "authentication_error", "x-api-key header is required"
        elif self.api_key is not None and key != self.api_key:
            status, kind, message = 401, "authentication_error", "invalid x-api-key"
        elif "anthropic-version" not in headers:
            status, kind = 400, "invalid_request_error"
            message = "anthropic-version: header is required"
        else:
            message = body_check(ex.body) if self.validate else None
            if message is None:
                return False
            status, kind = 400, "invalid_request_error"
        record.rejected = message
        ex.send_error(status, kind, message)
        return True

    def _messages(self, ex: Exchange, record: RecordedRequest) -> None:
        if self._refuse(ex, record, problem):
            return
        ex.model = ex.model or "claude-fake"
        ex.usage_base = self._cache.usage(ex.body)
        with self._cond:
            reply = self._queue.popleft() if self._queue else self.default
        reply = replies.text(reply) if isinstance(reply, str) else reply
        if reply is None:
            record.rejected = NOTHING_SCRIPTED
            ex.send_error(500, "api_error", NOTHING_SCRIPTED)
            return
        reply.serve(ex)

    def _count_tokens(self, ex: Exchange, record: RecordedRequest) -> None:
        def check(body):
            return problem({"max_tokens": 1, **body}) if isinstance(body, dict) else problem(body)

        if self.count_delay:
            self._closing.wait(self.count_delay)  # a slow count (ends early when the fake closes)
        gate = self.count_gate
        while gate is not None and not gate.wait(0.05) and not self._closing.is_set():
            pass  # a held count, until the test lets it go (or the fake closes)
        if self.count_failure is not None:
            ex.send_error(self.count_failure, "api_error", "fake: counting is down")
        elif not self._refuse(ex, record, check):
            ex.send_json(200, {"input_tokens": count_tokens(ex.body)})


def _model(name: str) -> dict:
    return {"type": "model", "id": name, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}


def _shutdown(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
