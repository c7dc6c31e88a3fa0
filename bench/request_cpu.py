"""Worker CPU per request on the app as it runs (`python -m src.app`, 1 gevent worker), no turn:

    .venv/bin/python bench/request_cpu.py [--requests 1500]

`GET /healthz` on a new connection and on a kept-alive one, `POST /api/chat/stream` for a
session that does not exist (on a new connection, as an SSE turn starts: everything an SSE turn
costs before its reply, up to the session lookup, and the 404), and the same chat sent as a
WebSocket frame on an open socket. The difference between the last two is what an SSE turn
costs more than a WebSocket turn before any reply exists. CPU from /proc (`bench_procs.cpu_seconds`).
"""
from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import websocket

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_procs import cpu_seconds, serve_app, worker_pids  # noqa: E402

CHAT = json.dumps({"session_id": "nosuchsession000", "message": "hi"})
JSON = {"Content-Type": "application/json"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, \
            serve_app("http://127.0.0.1:9", data, 1) as (base, proc):
        port = int(base.rsplit(":", 1)[1])
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        ws = websocket.create_connection(base.replace("http", "ws") + "/ws/chat", timeout=30)

        def fresh(method: str, path: str, body: str | None = None) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(method, path, body, JSON if body else {})
            conn.getresponse().read()
            conn.close()

        def keep_alive() -> None:
            kept.request("GET", "/healthz")
            kept.getresponse().read()

        def frame() -> None:
            ws.send(json.dumps({"type": "chat", **json.loads(CHAT)}))
            ws.recv()

        cases: list[tuple[str, Callable[[], None]]] = [
            ("GET /healthz, new connection", lambda: fresh("GET", "/healthz")),
            ("GET /healthz, kept alive", keep_alive),
            ("POST /api/chat/stream, unknown session, new connection",
             lambda: fresh("POST", "/api/chat/stream", CHAT)),
            ("WebSocket chat frame, unknown session", frame),
        ]
        pids = worker_pids(proc.pid)
        print("| request | worker CPU per request |\n|---|---|")
        try:
            for name, call in cases:
                for _ in range(100):
                    call()
                before = cpu_seconds(pids)
                for _ in range(args.requests):
                    call()
                spent = (cpu_seconds(pids) - before) / args.requests
                print(f"| {name} | {spent * 1e6:.0f} µs |", flush=True)
        finally:
            ws.close()
            kept.close()


if __name__ == "__main__":
    main()
