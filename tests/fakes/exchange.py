"""The HTTP side of FakeClaude: one handler thread per connection, one Exchange per request.

Waits never sleep blindly: they wake on the awaited Event, on the client closing its socket
(EOF), or on `FakeClaude.close()`, which shuts every open connection down.
"""
import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler

from tests.fakes import sse

_GATE_STEP = 0.02


class Exchange:
    """One request and the means to answer it: JSON, a chunked SSE stream, a drop, a wait."""

    def __init__(self, handler: "Handler", method: str, raw: bytes, closing: threading.Event):
        self._handler, self._closing = handler, closing
        self.method, self.raw = method, raw
        self.path = handler.path.split("?", 1)[0]
        self.peer = handler.client_address[1]  # the client's port: which connection it came on
        self.headers = {key.lower(): value for key, value in handler.headers.items()}
        try:
            self.body = json.loads(raw) if raw else None
        except ValueError:
            self.body = None
        is_dict = isinstance(self.body, dict)
        self.stream = is_dict and self.body.get("stream") is True
        self.model = self.body.get("model") if is_dict else None
        self.request_id = sse.new_id("req")
        self.index = -1
        self.usage_base = {"input_tokens": 1, "cache_creation_input_tokens": 0,
                           "cache_read_input_tokens": 0}
        self.on_disconnect = None
        self.started = self.gone = False

    def error_body(self, error_type: str, message: str) -> dict:
        """The API's error object."""
        return {"type": "error", "error": {"type": error_type, "message": message},
                "request_id": self.request_id}

    def send_json(self, status: int, obj: object, headers: dict | None = None) -> bool:
        """A complete JSON response."""
        data = json.dumps(obj).encode("utf-8")
        return self._head(status, {"Content-Type": "application/json",
                                   "Content-Length": str(len(data)), **(headers or {})}) \
            and self._send(data)

    def send_error(self, status: int, error_type: str, message: str, headers=None) -> None:
        """An HTTP error; once a stream has started, an `event: error` instead."""
        body = self.error_body(error_type, message)
        if not self.started:
            self.send_json(status, body, headers)
        elif self.write(sse.render("error", body)):
            self.end_stream()

    def start_stream(self) -> bool:
        """Send the 200 SSE headers (once)."""
        if self.started:
            return not self.gone
        self.started = True
        return self._head(200, {"Content-Type": "text/event-stream; charset=utf-8",
                                "Cache-Control": "no-cache", "Transfer-Encoding": "chunked"})

    def write(self, raw: bytes) -> bool:
        """One chunk, flushed; False once the client is gone."""
        return not self.gone and self._send(b"%x\r\n%s\r\n" % (len(raw), raw))

    def end_stream(self) -> bool:
        """The final zero-length chunk."""
        return not self.gone and self._send(b"0\r\n\r\n")

    def drop(self) -> None:
        """Close the connection now, whatever is unfinished."""
        self._handler.close_connection = True
        try:
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def drop_json(self, obj: object) -> None:
        """Announce a full JSON body, send half of it, close."""
        data = json.dumps(obj).encode("utf-8")
        if self._head(200, {"Content-Type": "application/json", "Content-Length": str(len(data))}):
            self._send(data[:len(data) // 2])
        self.drop()

    def pause(self, seconds: float) -> bool:
        """Wait `seconds` between events; False if the fake is closing or the client left."""
        return self.wait(None, seconds) == "timeout"

    def wait(self, event: threading.Event | None = None, timeout: float | None = None) -> str:
        """Wait for `event`; "set", "timeout", "disconnected" (recorded) or "closing"."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if event is not None and event.is_set():
                return "set"
            if self._closing.is_set():
                return "closing"
            if self.gone:
                return "disconnected"
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return "timeout"
            if event is not None:
                event.wait(_GATE_STEP if remaining is None else min(_GATE_STEP, remaining))
            elif readable(self._handler.connection, remaining) and not self._peer_closed():
                self._closing.wait(_GATE_STEP)
            if self._peer_closed():
                self._lost()

    def _peer_closed(self) -> bool:
        try:
            return self._handler.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _head(self, status: int, headers: dict) -> bool:
        handler = self._handler
        try:
            handler.send_response(status)
            for key, value in {"request-id": self.request_id, **headers}.items():
                handler.send_header(key, value)
            handler.end_headers()
            return True
        except OSError:
            self._lost()
            return False

    def _send(self, data: bytes) -> bool:
        try:
            self._handler.wfile.write(data)
            self._handler.wfile.flush()
            return True
        except OSError:
            self._lost()
            return False

    def _lost(self) -> None:
        self.gone = True
        self._handler.close_connection = True
        if self.on_disconnect is not None and not self._closing.is_set():
            self.on_disconnect(self.index)


class Handler(BaseHTTPRequestHandler):
    """Reads each request and hands it to the owning FakeClaude (`server.fake`)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else small SSE chunks can wait ~40 ms for delayed ACKs

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, False)

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:
            self.close_connection = True

    def do_GET(self) -> None:
        self._exchange("GET")

    def do_POST(self) -> None:
        self._exchange("POST")

    def log_message(self, format, *args) -> None:
        """Quiet: the fake records requests instead of logging them."""

    def _exchange(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.server.fake._serve(Exchange(self, method, raw, self.server.fake._closing))


def readable(fileobj, timeout: float | None) -> bool:
    """Whether `fileobj` has data (or its end) within `timeout` seconds (None: wait). poll(), not
    select(): select() refuses descriptors numbered 1024 and up, which a long test process
    running many servers and clients can reach."""
    poller = select.poll()
    poller.register(fileobj, select.POLLIN)
    return bool(poller.poll(None if timeout is None else max(0.0, timeout) * 1000))
