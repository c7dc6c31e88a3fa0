"""Real clients for the chat transports (SSE over http.client, WebSocket over websocket-client)
and a script for the fake that keeps chat replies apart from title and cortex-update requests."""
import http.client
import json
import socket
import threading
import time
from collections import deque
from typing import Self
from urllib.parse import urlsplit

import pytest
import websocket

from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.fakes.claude import replies

API_KEY = "sk-ant-test-SECRET-0123456789abcdef"
NEWS = ("title", "cortex")  # WebSocket events the server may send at any time (docs/chat.md)
TIMEOUT = 30.0  # bounds a failure only (waits end on events); generous for a loaded machine


def live_config(app_config: dict, claude, **extra) -> dict:
    """The test app configuration pointed at the fake, with a key (a FakeOpenAI: the
    openai_compatible provider on its base URL, no key, as for a local server)."""
    if getattr(claude, "record_type", None) is not None and claude.url.endswith("/v1"):
        return {**app_config, "ANTHROPIC_API_KEY": API_KEY, "PROVIDER": "openai_compatible",
                "OPENAI_BASE_URL": claude.url, "MODEL": "llama3.2:3b", **extra}
    return {**app_config, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": claude.url,
            **extra}


class Script:
    """Answers the fake's requests by kind: chat replies in order, titles and cortex updates aside.

    Titles are requested in the background after a first exchange, so a plain FIFO queue would
    hand them a reply meant for the next chat turn.
    """

    def __init__(self, claude, title: str = "A fine title"):
        self.chat: deque = deque()
        self.cortex: deque = deque()
        self.title = title
        self.default_chat = replies.text("Default reply.")
        self._lock = threading.Lock()
        claude.default = replies.scripted(self._answer)

    def reply(self, *items) -> None:
        """Queue chat replies (a str means replies.text(str))."""
        with self._lock:
            self.chat.extend(replies.text(i) if isinstance(i, str) else i for i in items)

    def update(self, *items) -> None:
        """Queue replies for the cortex update's tool_use run."""
        with self._lock:
            self.cortex.extend(items)

    def _answer(self, body: dict):
        with self._lock:
            if body.get("max_tokens") == TITLE_MAX_TOKENS:
                return replies.text(self.title)
            if body.get("tools"):
                return self.cortex.popleft() if self.cortex else replies.text("Nothing to change.")
            return self.chat.popleft() if self.chat else self.default_chat


def chat_requests(claude) -> list:
    """The fake's recorded chat requests (streaming, no tools), in order."""
    return [r for r in claude.requests if r.stream and not r.tools]


class SseStream:
    """A POST answered with `text/event-stream`, read event by event as it arrives."""

    def __init__(self, base_url: str, path: str, body, *, raw: bytes | None = None,
                 content_type: str = "application/json", method: str = "POST",
                 headers: dict | None = None, receive_buffer: int | None = None):
        parts = urlsplit(base_url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
        if receive_buffer is not None:  # a small window: a client that does not read stalls
            self.conn.sock = _small_window_socket(parts.hostname, parts.port, receive_buffer)
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        self.last_id: str | None = None
        self.conn.request(method, path, data, {"Content-Type": content_type, **(headers or {})})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.content_type = self.response.getheader("Content-Type", "")

    def json(self) -> dict:
        """The body of a non-stream answer."""
        return json.loads(self.response.read())

    def next_event(self) -> tuple[str, dict] | None:
        """The next (type, data), or None at the end of the stream."""
        kind, data = None, None
        while True:
            line = self.response.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                self.last_id = line[4:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif line == "" and kind is not None:
                return kind, data

    def events(self) -> list[tuple[str, dict]]:
        """All remaining events."""
        out = []
        while (event := self.next_event()) is not None:
            out.append(event)
        return out

    def close(self) -> None:
        """Hang up (the server sees the client leave at its next write)."""
        self.response.close()
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _small_window_socket(host: str, port: int, size: int) -> socket.socket:
    """A connected socket whose receive buffer (set before connecting) is `size` bytes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class ChatSocketClient:
    """A real WebSocket client of /ws/chat that reads JSON events with a deadline."""

    def __init__(self, ws_url: str):
        self.ws = websocket.create_connection(ws_url + "/ws/chat", timeout=TIMEOUT)
        self.history: list[dict] = []

    def send(self, **frame) -> None:
        """Send one JSON frame."""
        self.ws.send(json.dumps(frame))

    def send_raw(self, data) -> None:
        """Send a frame as is (text or bytes)."""
        if isinstance(data, bytes):
            self.ws.send_binary(data)
        else:
            self.ws.send(data)

    def receive(self) -> dict:
        """The next frame whatever its type, background news included (fails after the
        timeout)."""
        event = json.loads(self.ws.recv())
        self.history.append(event)
        return event

    def next(self) -> dict:
        """The next event that is not background news: `title` and `cortex` events may arrive at
        any time, also between the chunks of a turn (docs/chat.md), so they are kept in `history`
        (see `first`) instead of being handed to a test reading a turn or an answer."""
        while (event := self.receive())["type"] in NEWS:
            pass
        return event

    def first(self, kind: str) -> dict:
        """The first event of `kind` this client received, waiting for it if need be (background
        news such as `title` or `cortex` may arrive before the `done` of the turn behind it)."""
        for event in self.history:
            if event["type"] == kind:
                return event
        return self.until(kind)[-1]

    def until(self, *types: str) -> list[dict]:
        """Events up to and including the first one whose type is in `types`; background news
        is left out unless it is asked for (it stays in `history`)."""
        seen = []
        while True:
            event = self.receive()
            if event["type"] in types:
                seen.append(event)
                return seen
            if event["type"] not in NEWS:
                seen.append(event)

    def chat(self, session_id: str, message: str) -> list[dict]:
        """Send a chat frame and read until done or error."""
        self.send(type="chat", session_id=session_id, message=message)
        return self.until("done", "error")

    def close(self) -> None:
        """Close the socket."""
        self.ws.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def eventually(check, timeout: float = TIMEOUT):
    """Re-evaluates `check()` until it returns something truthy; fails after `timeout` seconds.

    For state with no event to wait on (a row written after the client was gone).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.01)


PROVIDERS = ("anthropic", "openai_compatible")
# Runs an end-to-end test once per provider: `claude` is then FakeClaude or FakeOpenAI, and
# `live_config` points the app at whichever it is (see tests/chat/conftest.py).
BOTH_PROVIDERS = pytest.mark.parametrize("claude", PROVIDERS, indirect=True)
OPENAI_MODEL = "llama3.2:3b"


def ok(response, status: int = 200) -> dict:
    """The JSON body of a Flask test response, which must have `status`."""
    assert response.status_code == status, response.get_json()
    return response.get_json()


def lighthouse_world(client) -> dict:
    """A persona (Mira) with a world book (Coast) whose entry fires on "lighthouse", a user
    persona Sam ("Sam sails.") and a session with Mira; their ids (`persona`, `user`, `book`,
    `entry`, `session`). Sam is the default user persona unless one existed before."""
    persona = ok(client.post("/api/personas", json={"name": "Mira"}), 201)
    sam = ok(client.post("/api/user-personas", json={"name": "Sam",
                                                     "description": "Sam sails."}), 201)
    book = ok(client.post("/api/world-books", json={"name": "Coast"}), 201)
    entry = ok(client.post(f"/api/world-books/{book['id']}/entries",
                           json={"keys": ["lighthouse"], "content": "The lighthouse is red."}),
               201)
    ok(client.put(f"/api/personas/{persona['id']}/world-books/{book['id']}"))
    session = ok(client.post("/api/sessions", json={"persona_id": persona["id"]}), 201)
    return {"persona": persona["id"], "user": sam["id"], "book": book["id"],
            "entry": entry["id"], "session": session["id"]}
