"""The chat bench's capacity phases: many open sockets, many streams, half-open connections.

Every client call has a timeout, so a server that stops answering shows up as errors and slow
REST calls in the table instead of hanging the bench.
"""
from __future__ import annotations

import socket
import statistics
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import websocket

from bench.bench_clients import new_session, ws_turn
from bench.bench_procs import MemoryPeak, memory_kib, pss_kib

TIMEOUT = 10.0


def _open_ws(url: str):
    try:
        return websocket.create_connection(url, timeout=TIMEOUT)
    except Exception:
        return None


def open_sockets(base: str, count: int) -> list:
    """Opens `count` WebSockets (idle, like browser tabs); the ones the server accepted."""
    url = base.replace("http", "ws") + "/ws/chat"
    with ThreadPoolExecutor(32) as pool:
        return [ws for ws in pool.map(lambda _: _open_ws(url), range(count)) if ws is not None]


class RestProbe:
    """Times REST calls (a persona list) one after another until stopped; failures count."""

    def __init__(self, base: str, source: str = "127.0.0.1"):
        self.base, self.source = base, source
        self.times: list[float] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.base + "/api/personas", timeout=TIMEOUT) as r:
                    r.read()
                self.times.append(time.perf_counter() - start)
            except Exception:
                self.errors += 1

    def p95_ms(self) -> float:
        """95th percentile in ms (a failed call counts as the timeout)."""
        values = self.times + [TIMEOUT] * self.errors
        if len(values) < 2:
            return float("nan")
        return statistics.quantiles(values, n=100)[94] * 1000


def streaming(base: str, sockets: list, turns: int) -> tuple[int, int, list[float]]:
    """Every socket in `sockets` chats `turns` times, all at once; (turns ok, errors, TTFTs)."""
    sessions = [new_session(base, f"Capacity {i}") for i in range(len(sockets))]
    start = threading.Barrier(len(sockets))

    def chat(pair):
        ws, session_id = pair
        ok, errors, ttfts = 0, 0, []
        start.wait()
        for _ in range(turns):
            try:
                ttfts.append(ws_turn(ws, session_id))
                ok += 1
            except Exception:
                errors += 1
        return ok, errors, ttfts

    with ThreadPoolExecutor(len(sockets)) as pool:
        results = list(pool.map(chat, zip(sockets, sessions, strict=True)))
    return (sum(r[0] for r in results), sum(r[1] for r in results),
            [t for r in results for t in r[2]])


def half_open(port: int, count: int) -> list[socket.socket]:
    """`count` connections from 127.0.0.1 that send a request line and one header, then stall."""
    held = []
    for _ in range(count):
        s = socket.socket()
        s.settimeout(TIMEOUT)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /api/personas HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(s)
        except OSError:
            s.close()
    return held


def other_address_ok(port: int) -> tuple[bool, float]:
    """`/healthz` from another loopback address (127.0.0.2); (answered 200, seconds taken)."""
    start = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT,
                                      source_address=("127.0.0.2", 0)) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = s.recv(64)
        return answer.startswith(b"HTTP/1.1 200"), time.perf_counter() - start
    except OSError:
        return False, time.perf_counter() - start


def run_capacity(base: str, pid: int, idle: int, streams: int, turns: int,
                 half: int) -> dict:
    """The capacity figures: streams (and REST) with `streams` sockets open, then with `idle`
    open, then half-open connections from one address against /healthz from another."""
    port = int(base.rsplit(":", 1)[1])
    out: dict = {}
    first = open_sockets(base, streams)
    out["open"] = {"open": len(first), "rss_mib": memory_kib(pid, "VmRSS") / 1024,
                   "pss_mib": pss_kib(pid) / 1024}
    with RestProbe(base) as probe, MemoryPeak(pid) as memory:
        ok, errors, _ = streaming(base, first, turns)
    out["streams"] = {"open": len(first), "ok": ok, "errors": errors + streams - len(first),
                      "rest_p95": probe.p95_ms(), "rest_errors": probe.errors,
                      "rss_mib": memory.rss_kib / 1024, "pss_mib": memory.pss_kib / 1024}
    rest = open_sockets(base, idle - len(first))
    sockets = first + rest
    with RestProbe(base) as probe, MemoryPeak(pid) as memory:
        ok, errors, _ = streaming(base, first, turns)
    out["idle"] = {"open": len(sockets), "ok": ok, "errors": errors,
                   "rest_p95": probe.p95_ms(), "rest_errors": probe.errors,
                   "rss_mib": memory.rss_kib / 1024, "pss_mib": memory.pss_kib / 1024}
    for ws in sockets:
        ws.close()
    held = half_open(port, half)
    try:
        answered, seconds = other_address_ok(port)
        out["half_open"] = {"held": len(held), "answered": answered, "seconds": seconds}
    finally:
        for s in held:
            s.close()
    return out
