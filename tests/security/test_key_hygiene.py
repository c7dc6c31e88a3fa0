"""The key-hygiene scanner (tests/support/key_hygiene.py) can fail: leaks planted in test-only
routes of a throwaway app are caught in bodies, headers, streams, WebSocket frames, log records
and files, and a leaking test in a real pytest run fails."""
import json
import logging
import socket
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest
import websocket
from flask import Response
from flask_sock import Sock

from src.app import create_app
from tests.security.conftest import API_KEY
from tests.support.key_hygiene import LeakWatch, ScanningMiddleware
from tests.support.live_server import LiveServer
from tests.support.ws_frames import FrameReader

PLANTED = "sk-ant-api03-planted-leak-Zq81mW0xYv"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_config(app_config):
    return {**app_config, "ANTHROPIC_API_KEY": API_KEY}


@pytest.fixture
def leaky(tmp_path):
    """A throwaway app with routes that leak PLANTED, scanned by its own watch."""
    app = create_app({"DATA_DIR": str(tmp_path / "leaky"), "CORTEX_WORKER": False,
                      "ANTHROPIC_MAX_RETRIES": 0, "ANTHROPIC_TIMEOUT": 5.0, "TESTING": True})
    app.add_url_rule("/leak/body", "leak_body", lambda: {"debug": f"key={PLANTED}"})
    app.add_url_rule("/leak/header", "leak_header",
                     lambda: Response("fine", headers={"X-Debug": PLANTED}))
    half = len(PLANTED) // 2
    app.add_url_rule("/leak/stream", "leak_stream", lambda: Response(
        iter([b"data: " + PLANTED[:half].encode(), PLANTED[half:].encode() + b"\n\n"]),
        mimetype="text/event-stream"))
    app.add_url_rule("/leak/page", "leak_page",
                     lambda: f"<input value='{PLANTED.replace('-', '&#45;')}'>")
    sock = Sock(app)

    @sock.route("/leak/ws")
    def leak_ws(ws):
        ws.receive()
        ws.send(json.dumps({"type": "chunk", "text": PLANTED}))

    watch = LeakWatch()
    watch.add_secret(PLANTED)
    app.wsgi_app = ScanningMiddleware(app.wsgi_app, watch)
    return app, watch


@pytest.mark.parametrize("path,where", [
    ("/leak/body", "GET /leak/body: response body"),
    ("/leak/header", "GET /leak/header: response status and headers"),
    ("/leak/stream", "GET /leak/stream: response body"),
])
def test_leaks_in_responses_are_caught(leaky, path, where):
    app, watch = leaky
    with app.test_client() as client:
        response = client.get(path)
        assert response.status_code == 200
        assert PLANTED.encode() in response.get_data() + str(response.headers).encode()
    assert watch.leaks == [f"{where}: contains the key ending in …{PLANTED[-4:]}"]


def test_a_clean_response_reports_nothing(leaky):
    app, watch = leaky
    with app.test_client() as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/leak/page").status_code == 200
    assert watch.report() is None


def test_a_leak_in_a_websocket_frame_is_caught(leaky):
    app, watch = leaky
    with LiveServer(app) as live:
        ws = websocket.create_connection(live.ws_url + "/leak/ws", timeout=10)
        try:
            ws.send("go")
            assert PLANTED in ws.recv()
        finally:
            ws.close()
    assert any("(WebSocket): frame" in leak for leak in watch.leaks), watch.leaks


def test_a_leak_in_a_compressed_frame_is_caught(leaky):
    """Browsers ask for permessage-deflate; the frames on the wire are then compressed."""
    app, watch = leaky
    with LiveServer(app) as live, socket.create_connection(("127.0.0.1", live.port),
                                                           timeout=10) as raw:
        raw.sendall(f"GET /leak/ws HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\n"
                    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n".encode())
        received = _read_until(raw, b"", lambda data: b"\r\n\r\n" in data)
        raw.sendall(_frame(b"go", mask=b"\x0a\x0b\x0c\x0d"))
        received = _read_until(raw, received,
                               lambda data: len(data.partition(b"\r\n\r\n")[2]) >= 2)
    assert b"permessage-deflate" in received and PLANTED.encode() not in received
    assert any("(WebSocket): frame" in leak for leak in watch.leaks), watch.leaks


def _read_until(raw, received: bytes, done) -> bytes:
    while not done(received):
        chunk = raw.recv(4096)
        assert chunk, received
        received += chunk
    return received


def _frame(payload: bytes, *, opcode=0x1, fin=True, rsv1=False, mask=b"") -> bytes:
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    size = len(payload)
    head = bytes([first]) + (bytes([(0x80 if mask else 0) | size]) if size < 126 else
                             bytes([(0x80 if mask else 0) | 126]) + size.to_bytes(2, "big"))
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + payload


def test_the_frame_reader_sees_through_compression_fragments_and_masks():
    watch = LeakWatch()
    watch.add_secret(PLANTED)
    reader = FrameReader(watch, "ws")
    compress = zlib.compressobj(wbits=-15)
    message = json.dumps({"text": PLANTED * 3}).encode()
    deflated = (compress.compress(message) + compress.flush(zlib.Z_SYNC_FLUSH))[:-4]
    wire = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
    wire += _frame(deflated, rsv1=True)
    wire += _frame(PLANTED[:5].encode(), fin=False) + _frame(b"", opcode=0x9)
    wire += _frame(PLANTED[5:].encode(), opcode=0x0, mask=b"\x01\x02\x03\x04")
    for i in range(0, len(wire), 7):
        reader.feed(wire[i:i + 7])
    assert watch.leaks == [f"ws: frame: contains the key ending in …{PLANTED[-4:]}"] * 2
    assert PLANTED not in message.decode()[:0] and not watch.problems


def test_unreadable_frames_are_reported_not_ignored():
    watch = LeakWatch()
    watch.add_secret(PLANTED)
    reader = FrameReader(watch, "ws")
    reader.feed(b"HTTP/1.1 101 OK\r\n\r\n" + _frame(b"\xff\x00garbage", rsv1=True))
    assert watch.problems and watch.report()


def test_log_records_are_scanned_with_their_tracebacks():
    watch = LeakWatch()
    watch.add_secret(PLANTED)
    try:
        raise RuntimeError(f"upstream said: bad key {PLANTED}")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None,
                                   sys.exc_info())
    quiet = logging.LogRecord("x", logging.DEBUG, __file__, 1, "key %s", (PLANTED[-4:],), None)
    watch.scan_log_records([quiet, record])
    assert watch.leaks == [f"log record x:ERROR: contains the key ending in …{PLANTED[-4:]}"]


def test_stored_files_are_scanned_except_secrets_json(tmp_path):
    (tmp_path / "secrets.json").write_text(json.dumps({"anthropic_api_key": PLANTED}))
    watch = LeakWatch()
    watch.add_data_dir(tmp_path)
    assert PLANTED in watch.secrets
    watch.scan_files()
    assert watch.report() is None
    (tmp_path / "cortex").mkdir()
    (tmp_path / "cortex" / "memory.md").write_text(f"remember {PLANTED}")
    watch.scan_files()
    assert watch.leaks == [f"stored file cortex/memory.md: contains the key ending in …"
                           f"{PLANTED[-4:]}"]


def test_the_suite_watches_the_app_fixture_and_the_keys_sent_to_it(app, client, key_hygiene,
                                                                    data_dir):
    assert isinstance(app.wsgi_app, ScanningMiddleware) and app.wsgi_app.watch is key_hygiene
    assert API_KEY in key_hygiene.secrets and str(data_dir) in key_hygiene.data_dirs
    sent = "sk-ant-api03-sent-by-the-test-00000Qq"
    client.put("/api/settings/api-key", json={"api_key": sent})
    assert sent in key_hygiene.secrets
    assert logging.getLogger().getEffectiveLevel() == logging.DEBUG


LEAKING_TEST = f'''
import pytest

@pytest.fixture
def app_config(app_config):
    return {{**app_config, "ANTHROPIC_API_KEY": "{PLANTED}"}}

def test_leaks(app, client):
    app.add_url_rule("/oops", "oops", lambda: "the key is {PLANTED}")
    assert client.get("/oops").status_code == 200

def test_clean(app, client):
    assert client.get("/healthz").status_code == 200
'''


def test_a_leaking_test_fails_in_a_real_run(tmp_path):
    test_file = tmp_path / "test_leaking.py"
    test_file.write_text(textwrap.dedent(LEAKING_TEST))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
         str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-p", "tests.conftest",
         "-W", "ignore::pytest.PytestAssertRewriteWarning", str(test_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "key hygiene: a key leaked" in result.stdout
    assert f"GET /oops: response body: contains the key ending in …{PLANTED[-4:]}" \
        in result.stdout
    assert "FAILED ::test_leaks - Failed: key hygiene: a key leaked" in result.stdout
    assert "1 failed, 1 passed" in result.stdout
