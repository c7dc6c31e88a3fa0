"""`python -m src.app` on all interfaces with a token: gunicorn serves, and enforces the token on
HTTP and on the WebSocket upgrade (the refusal without a token is tests/test_app.py's)."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import websocket

from tests.security.conftest import TOKEN


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(url: str, headers: dict | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as err:
        err.close()
        return err.code


def _wait_until_up(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read().decode())
        try:
            if _status(url) == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not start")


def test_a_lan_bind_with_a_token_serves_only_with_the_token(tmp_path):
    port = _free_port()
    env = {**os.environ, "PERSONA_DATA_DIR": str(tmp_path), "PERSONA_HOST": "0.0.0.0",
           "PERSONA_PORT": str(port), "PERSONA_ACCESS_TOKEN": TOKEN}
    env.pop("ANTHROPIC_API_KEY", None)
    base = f"http://127.0.0.1:{port}"
    with subprocess.Popen([sys.executable, "-m", "src.app"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT) as proc:
        try:
            _wait_until_up(base + "/healthz", proc)
            assert _status(base + "/api/personas") == 401
            assert _status(base + "/api/personas",
                           {"Authorization": f"Bearer {TOKEN}"}) == 200
            try:
                websocket.create_connection(f"ws://127.0.0.1:{port}/ws/chat", timeout=5)
                raise AssertionError("the upgrade was accepted without the token")
            except websocket.WebSocketBadStatusException as refused:
                assert refused.status_code == 401
            ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws/chat", timeout=5,
                                             header=[f"Authorization: Bearer {TOKEN}"])
            try:
                ws.send(json.dumps({"type": "subscribe", "persona_id": "default"}))
                assert json.loads(ws.recv())["type"] == "subscribed"
            finally:
                ws.close()
        finally:
            proc.terminate()
            proc.wait(timeout=60)  # bounds a failure only: a server that stops at once passes
            output = proc.stdout.read().decode()
    assert TOKEN not in output
