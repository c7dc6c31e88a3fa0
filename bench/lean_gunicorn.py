"""The lean server's SSE turn behind the app's HTTP stack: gunicorn's gevent worker and Flask.

The `gunicorn` stack of bench/lean_server.py (which is the `pywsgi` one): the very same
`Lean.turn` (same store, same SDK client, same SSE generator `Lean.sse`) answers
`POST /api/chat/stream` from a bare Flask app (one route: the JSON body read with
`request.get_json()`, `Response(generator, mimetype="text/event-stream")`), served by gunicorn's
stock gevent worker (`worker_class="gevent"`, the app's keep-alive and connection limit) under
gunicorn's arbiter, started programmatically like the app's (`src/serve.py`). What this costs
per turn over the pywsgi stack is what gunicorn and Flask cost any server; what the app's SSE
turn costs over this is the app's own (issue #23, docs/performance.md "SSE floor"). No
WebSocket route: the WebSocket turn has no HTTP request per turn to measure.

    python bench/lean_gunicorn.py PORT FAKE_URL DB_PATH [anthropic|openai_compatible] \
        [plain|app-store] [WORKERS]

The same command line and stdin protocol as lean_server.py. Several processes may serve one
PORT (gunicorn's `reuse_port`: the kernel spreads the connections over their listeners), or one
arbiter may run WORKERS workers (default 1) accepting from its one shared listener as the app's
do (each new connection wakes every worker, one accepts it). `{"url": ...}` is printed once the
workers are up, a template line is answered `{}` once every worker has it, `quit` (or the end of
stdin) stops the arbiter. The arbiter (this process) reads stdin in a thread and hands each
template to each worker over a pipe of its own, made before the forks, and each worker
acknowledges on another; a worker builds the SDK client and the store after gunicorn's
monkey-patching, as the app's workers build the app.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from src.server import HEADER_SECONDS, WORKER_CONNECTIONS  # noqa: E402


class Pipes:
    """Templates from the arbiter to its worker, acknowledgements back (made before the fork)."""

    def __init__(self) -> None:
        self.command_read, self.command_write = os.pipe()
        self.ack_read, self.ack_write = os.pipe()

    def send(self, line: str) -> str:
        """In the arbiter: hands `line` to the worker and waits for its answer."""
        os.write(self.command_write, line.encode() + b"\n")
        return self.answer()

    def answer(self) -> str:
        """In the arbiter: the worker's next line (`ready`, `ok`)."""
        got = b""
        while not got.endswith(b"\n"):
            chunk = os.read(self.ack_read, 64)
            if not chunk:
                raise RuntimeError("the lean gunicorn worker went away")
            got += chunk
        return got.decode().strip()

    def serve(self, lean: Any) -> None:
        """In the worker (a greenlet): sets each template line the arbiter sends."""
        from gevent.fileobject import FileObjectPosix

        from src.worker_memory import settle_heap

        with FileObjectPosix(self.command_read, "rb", close=False) as commands:
            for line in commands:
                lean.template = json.loads(line)
                settle_heap()  # as lean_server.py: after boot and after the warm-up turns
                os.write(self.ack_write, b"ok\n")


def flask_app(lean: Any) -> Any:
    """A bare Flask app: `POST /api/chat/stream` streams `lean`'s SSE turn."""
    from flask import Flask, Response, request

    app = Flask("lean")

    @app.post("/api/chat/stream")
    def stream() -> Response:
        body = request.get_json()
        return Response(lean.sse(body["session_id"], body["message"]),
                        mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})
    return app


class LeanGunicorn(BaseApplication):
    """gunicorn's arbiter with stock gevent workers (one each of `pipes`) serving `flask_app`."""

    def __init__(self, port: int, argv: list[str], pipes: list[Pipes]):
        self.port, self.argv, self.pipes = port, argv, pipes
        self.lean: Any = None
        self.forked = 0
        self.mine = pipes[0]  # the pipes of the worker forked next (set before each fork)
        super().__init__()

    def load_config(self) -> None:
        settings = {"bind": f"127.0.0.1:{self.port}", "workers": len(self.pipes),
                    "worker_class": "gevent", "reuse_port": True, "backlog": 2048,
                    "keepalive": HEADER_SECONDS, "worker_connections": WORKER_CONNECTIONS,
                    "graceful_timeout": 2, "loglevel": "warning", "control_socket_disable": True,
                    "pre_fork": self._pre_fork, "worker_exit": self._worker_exit}
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self) -> Any:
        """In the worker, after gunicorn's monkey-patching: the lean turn and its Flask app."""
        import gevent

        from bench.lean_server import Lean
        from src.worker_memory import settle_heap
        fake_url, db_path, *rest = self.argv
        self.lean = Lean(fake_url, db_path, *(rest or ["anthropic"]))
        settle_heap()
        gevent.spawn(self.mine.serve, self.lean)
        os.write(self.mine.ack_write, b"ready\n")
        return flask_app(self.lean)

    def _pre_fork(self, _arbiter: Any, _worker: Any) -> None:
        self.mine = self.pipes[self.forked % len(self.pipes)]
        self.forked += 1

    def _worker_exit(self, _arbiter: Any, _worker: Any) -> None:
        if self.lean is not None:
            self.lean.sdk.close()


def talk(port: int, pipes: list[Pipes]) -> None:
    """The arbiter's stdin thread: the lean server's protocol (each line to every worker),
    then a graceful stop."""
    if all(each.answer() == "ready" for each in pipes):
        print(json.dumps({"url": f"http://127.0.0.1:{port}"}), flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        acks = [each.send(line.strip()) for each in pipes]
        print("{}" if acks == ["ok"] * len(acks) else '{"error": "no ack"}', flush=True)
    os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    port = int(sys.argv[1])
    pipes = [Pipes() for _ in range(int(sys.argv[6]) if len(sys.argv) > 6 else 1)]
    threading.Thread(target=talk, args=(port, pipes), daemon=True).start()
    LeanGunicorn(port, sys.argv[2:6], pipes).run()


if __name__ == "__main__":
    main()
