"""A loopback HTTP listener that records everything that reaches it (for "where may the key go"
tests) and answers as told: JSON, a redirect, silence, or a trickle of bytes that never ends."""
import json
import socket
import threading
from dataclasses import dataclass, field


@dataclass
class Seen:
    """One request as it arrived: the request line, the headers and the body, raw."""

    raw: bytes
    path: str = ""

    def carries(self, secret: str) -> bool:
        """Whether `secret` appears anywhere in the request."""
        return secret.encode() in self.raw


@dataclass
class Answer:
    """What the listener sends back: `kind` json | redirect | silent | trickle | html."""

    kind: str = "json"
    status: int = 200
    body: object = field(default_factory=dict)
    location: str = ""
    content_type: str = "application/json"


class Listener:
    """`with Listener() as listener:`; `listener.url`, `listener.seen`, `listener.answer`."""

    def __init__(self, answer: Answer | None = None):
        self.answer = answer or Answer()
        self.seen: list[Seen] = []
        self._closing = threading.Event()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.port = self._server.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def __enter__(self) -> "Listener":  # noqa: PYI034 - a test helper, never subclassed
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stops accepting, ends every held connection and joins the threads."""
        self._closing.set()
        self._accepting.join(10)
        for thread in list(self._threads):
            thread.join(10)
        self._server.close()

    def reached_with(self, secret: str) -> list[Seen]:
        """The requests that carried `secret`."""
        return [seen for seen in self.seen if seen.carries(secret)]

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                raw = _read_request(conn)
            except OSError:
                return
            if not raw:
                return
            line = raw.split(b"\r\n", 1)[0].decode("latin-1")
            self.seen.append(Seen(raw, line.split(" ")[1] if " " in line else ""))
            try:
                self._respond(conn)
            except OSError:
                pass

    def _respond(self, conn: socket.socket) -> None:
        answer = self.answer
        if answer.kind == "silent":
            self._closing.wait()
            return
        if answer.kind == "trickle":
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"transfer-encoding: chunked\r\n\r\n")
            while not self._closing.wait(0.3):
                conn.sendall(b"1\r\n \r\n")
            return
        body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        headers = [f"HTTP/1.1 {answer.status} X", f"content-type: {answer.content_type}",
                   f"content-length: {len(body)}", "connection: close"]
        if answer.kind == "redirect":
            headers.append(f"location: {answer.location}")
        conn.sendall(("\r\n".join(headers) + "\r\n\r\n").encode() + body)


def _read_request(conn: socket.socket) -> bytes:
    """The request line, headers and (by Content-Length) body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body
