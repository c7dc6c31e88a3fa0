"""Capacity under the production worker model (`python -m src.app`, gevent workers).

One worker process, so every connection below shares it: idle WebSockets and half-open
connections pin nothing, and waits on another process's locks (a persona's `flock`, SQLite's
write lock) do not stall the worker's other connections. Deadlines only bound failures; nothing
here asserts a duration.
"""
import fcntl
import json
import os
import socket
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest
import websocket

from src.server import PENDING_PER_ADDRESS
from tests.fakes.claude import FakeClaude, replies
from tests.robustness.servers import ServerProcess

KEY = "sk-ant-capacity-test-000000000000"
DEADLINE = 20.0


@pytest.fixture(scope="module")
def fake():
    with FakeClaude() as claude:
        claude.default = replies.text("Hello there.")
        yield claude


def _serve(fake, tmp_path_factory, **env):
    data = tmp_path_factory.mktemp("capacity")
    with ServerProcess(data / "data", data / "server.log", PERSONA_WORKERS="1",
                       ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=fake.url, **env) as proc:
        proc.data_dir = data / "data"
        yield proc


@pytest.fixture(scope="module")
def server(fake, tmp_path_factory):
    """The default header timeout: a client that a loaded machine slows between its connect
    and its request is not hung up on (the 1 s one below closed a WebSocket handshake in CI)."""
    yield from _serve(fake, tmp_path_factory)


@pytest.fixture(scope="module")
def impatient_server(fake, tmp_path_factory):
    """PERSONA_HEADER_TIMEOUT=1, for the test that waits for it."""
    yield from _serve(fake, tmp_path_factory, PERSONA_HEADER_TIMEOUT="1")


def _healthz_from(server, source: str) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE,
                                  source_address=(source, 0)) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return s.recv(64)


def _half_open(server, count: int, source: str) -> list[socket.socket]:
    """Connections from `source` (an address of their own: the ones a test leaves behind count
    against no other test's client) that send half their headers."""
    held = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE,
                                     source_address=(source, 0))
        s.sendall(b"GET /api/personas HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        held.append(s)
    return held


def _chat(server, session_id: str) -> list[dict]:
    ws = websocket.create_connection(server.ws_url + "/ws/chat", timeout=DEADLINE)
    try:
        ws.send(json.dumps({"type": "chat", "session_id": session_id, "message": "Hi"}))
        frames = []
        while not frames or frames[-1]["type"] not in ("done", "error"):
            frames.append(json.loads(ws.recv()))
        return frames
    finally:
        ws.close()


def _session(server) -> tuple[str, str]:
    persona = server.call("POST", "/api/personas", {"name": "Mia"})[2]
    session = server.call("POST", "/api/sessions", {"persona_id": persona["id"]})[2]
    return persona["id"], session["id"]


def test_half_open_connections_from_one_address_do_not_stop_another(server):
    """More half-open connections than the old model had threads; another address is served."""
    with ExitStack() as stack:
        for s in _half_open(server, 3 * PENDING_PER_ADDRESS, "127.0.0.11"):
            stack.callback(s.close)
        assert _healthz_from(server, "127.0.0.2").startswith(b"HTTP/1.1 200")


def test_an_address_over_its_half_open_cap_is_refused_at_once(server):
    with ExitStack() as stack:
        for s in _half_open(server, PENDING_PER_ADDRESS, "127.0.0.13"):
            stack.callback(s.close)
        extra = _half_open(server, 1, "127.0.0.13")[0]
        stack.callback(extra.close)
        try:
            assert extra.recv(64) == b""
        except ConnectionResetError:  # closed with its request unread
            pass
        assert "Too many connections still sending headers from 127.0.0.13" in server.log()
        assert _healthz_from(server, "127.0.0.2").startswith(b"HTTP/1.1 200")


def test_a_connection_that_never_finishes_its_headers_is_closed(impatient_server):
    """PERSONA_HEADER_TIMEOUT=1: the server hangs up on it (the deadline is only a bound)."""
    held = _half_open(impatient_server, 1, "127.0.0.1")[0]
    try:
        assert held.recv(64) == b""
    finally:
        held.close()


def test_idle_websockets_pin_no_thread(server):
    """150 idle sockets (the old model had 64 threads per worker); a chat still streams."""
    _, session_id = _session(server)
    url = server.ws_url + "/ws/chat"
    with ThreadPoolExecutor(16) as pool:
        idle = list(pool.map(lambda _: websocket.create_connection(url, timeout=DEADLINE),
                             range(150)))
    try:
        frames = _chat(server, session_id)
        assert next(f["type"] for f in frames) == "start"
        assert frames[-1]["type"] == "done"
        assert server.call("GET", "/healthz")[0] == 200
    finally:
        for ws in idle:
            ws.close()


def test_a_persona_lock_held_by_another_process_stalls_only_that_persona(server):
    """The worker waits for the flock in a pool thread: other requests go on meanwhile."""
    persona_id, _ = _session(server)
    other_id, _ = _session(server)
    path = os.path.join(server.data_dir, "cortex", ".locks", f"{persona_id}.lock")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        waiting = _in_thread(server.call, "GET", f"/api/personas/{persona_id}/cortex/memory.md")
        assert server.call("GET", "/healthz")[0] == 200
        assert server.call("GET", f"/api/personas/{other_id}/cortex/memory.md")[0] == 200
        assert not waiting.done.is_set()
        fcntl.flock(fd, fcntl.LOCK_UN)
        assert waiting.done.wait(DEADLINE) and waiting.result[0] == 200
    finally:
        os.close(fd)


def test_a_write_lock_held_by_another_process_stalls_only_writers(server):
    """SQLite's busy wait is cooperative: reads and /healthz go on while a write waits."""
    conn = sqlite3.connect(os.path.join(server.data_dir, "app.db"), isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        waiting = _in_thread(server.call, "POST", "/api/personas", {"name": "Noa"})
        assert server.call("GET", "/healthz")[0] == 200
        assert server.call("GET", "/api/personas")[0] == 200
        assert not waiting.done.is_set()
        conn.execute("COMMIT")
        assert waiting.done.wait(DEADLINE) and waiting.result[0] == 201
    finally:
        conn.close()


class _Call:
    def __init__(self):
        self.done = threading.Event()
        self.result = None


def _in_thread(fn, *args) -> _Call:
    call = _Call()

    def run():
        try:
            call.result = fn(*args)
        finally:
            call.done.set()
    threading.Thread(target=run, daemon=True).start()
    return call
