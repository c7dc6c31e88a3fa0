"""The app as it runs in production (`python -m src.app`: gunicorn, gevent workers) in a subprocess.

Every server runs under gevent's blocking monitor (`PERSONA_BLOCKING_REPORT`, src/blocking_report.py):
a block of a worker's event loop that computed, or slept in a system call, for more than
BLOCK_SECONDS fails the test at the server's stop; a loop that only waited for a busy machine (a
CPU or the disk) does not.
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 120.0  # bounds a failure only: a loaded machine boots gunicorn slowly
BLOCK_SECONDS = 0.5


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """`python -m src.app` on a free port with the given environment; output goes to `log_path`.

    Use as a context manager: it waits for /healthz on entry and stops the server on exit.
    """

    def __init__(self, data_dir, log_path, **env):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        self.log_path = Path(log_path)
        self.blocking_report = self.log_path.with_suffix(".blocks.jsonl")
        self.env = {**os.environ, "PERSONA_DATA_DIR": str(data_dir),
                    "PERSONA_PORT": str(self.port), "PERSONA_LOG_LEVEL": "WARNING",
                    "PERSONA_BLOCKING_REPORT": str(self.blocking_report), **env}
        self.proc: subprocess.Popen | None = None
        self._log = None

    def __enter__(self) -> Self:
        self.start()
        try:
            self.wait_until_up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.terminate()
        self.wait_stopped()
        if exc[0] is None:
            self.check_blocks()

    def check_blocks(self) -> None:
        """Fails when a worker's event loop computed or slept for over BLOCK_SECONDS without
        a switch, net of the machine's load (the report's stack says where)."""
        from tests.robustness.stall_watch import stalling_blocks
        blocks = stalling_blocks(self.blocking_report, 0, BLOCK_SECONDS)
        assert not blocks, "the event loop was blocked:\n" + "\n".join(
            f"{b['cpu']} s CPU, {b.get('stalled')} s stalled ({b['wall']} s; waited "
            f"{b.get('waited')} s, disk {b.get('disk')} s, other threads' CPU "
            f"{b.get('others_cpu')} s):\n{b['report']}"
            for b in blocks)

    def start(self) -> None:
        """Starts the process without waiting for it (see `serving`)."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in wait_stopped)
        self.proc = subprocess.Popen([sys.executable, "-m", "src.app"], cwd=ROOT, env=self.env,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def terminate(self) -> None:
        """Asks the server to stop (gunicorn's graceful shutdown), without waiting for it."""
        if self.proc.poll() is None:
            self.proc.terminate()

    def wait_stopped(self) -> None:
        """Waits for the stop `terminate` asked for; SIGKILL after 15 s."""
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        self.proc.__exit__(None, None, None)

    def kill(self) -> None:
        """SIGKILLs the master and every worker at once (its own process group), like a crash."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=15)

    def log(self) -> str:
        """What the server printed so far."""
        return self.log_path.read_text(errors="replace")

    def call(self, method: str, path: str, body=None, headers=None, raw: bool = False,
             timeout: float = 30):
        """(status, headers, JSON body) of one request (`raw`: the body's bytes)."""
        with closing(http.client.HTTPConnection("127.0.0.1", self.port,
                                                timeout=timeout)) as conn:
            data = None if body is None else json.dumps(body)
            conn.request(method, path, data, {"Content-Type": "application/json",
                                               **(headers or {})})
            response = conn.getresponse()
            content = response.read()
            return response.status, response.headers, content if raw else \
                json.loads(content or b"null")

    def wait_until_up(self) -> None:
        """Polls /healthz (the process has no readiness event to wait on)."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if self.call("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{self.log()}")
            time.sleep(0.05)


@contextmanager
def serving(*servers: ServerProcess):
    """Starts several servers at once and stops them at once: their start-ups (interpreter,
    imports, gunicorn workers) and graceful shutdowns overlap instead of adding up."""
    started = []
    try:
        for server in servers:
            server.start()
            started.append(server)
        for server in servers:
            server.wait_until_up()
        yield servers
    finally:
        for server in started:
            server.terminate()
        for server in started:
            server.wait_stopped()
    for server in started:
        server.check_blocks()
