"""Over-long request lines and headers (issue 21): gunicorn refuses them before Flask sees the
request; the app's worker (`src/server.py`) answers in the JSON error shape of every other
refusal (DESIGN §7), never with gunicorn's HTML page, and names the limit without echoing the
request. Served as in production (`python -m src.app`, gunicorn, a gevent worker) and spoken to
over a plain socket, so the whole answer is what went over the wire."""
import json
import socket

import pytest

from tests.robustness.servers import ServerProcess

LINE_LIMIT, FIELDS_LIMIT, FIELD_SIZE_LIMIT = 4094, 100, 8190  # gunicorn's defaults, unchanged


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One `python -m src.app` with one worker for the module."""
    path = tmp_path_factory.mktemp("head-limits")
    (path / "data").mkdir()
    with ServerProcess(path / "data", path / "server.log", PERSONA_WORKERS="1") as served:
        yield served


def _exchange(port: int, head: bytes) -> tuple[int, dict, bytes]:
    """Sends a request head, reads the answer to the end (the server closes the connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head_part, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head_part.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), {k.lower(): v for k, v in headers.items()}, body


def _get(path: str, *headers: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    return "\r\n".join(lines).encode()


def _assert_json_error(answer, status: int, code: str, *, not_echoed: str) -> str:
    got_status, headers, body = answer
    assert got_status == status, body[:300]
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"} and error["code"] == code
    assert not_echoed not in body.decode()
    return error["message"]


def test_a_5_kb_url_gets_a_json_414(server):
    path = "/api/personas?q=" + "u" * 5000
    message = _assert_json_error(_exchange(server.port, _get(path)), 414, "uri_too_long",
                                 not_echoed="uuuuuuuu")
    assert str(LINE_LIMIT) in message


def test_a_header_over_the_field_size_gets_a_json_431(server):
    head = _get("/healthz", "X-Padding: " + "h" * FIELD_SIZE_LIMIT)
    message = _assert_json_error(_exchange(server.port, head), 431, "headers_too_large",
                                 not_echoed="hhhhhhhh")
    assert str(FIELD_SIZE_LIMIT) in message


def test_too_many_header_fields_get_a_json_431(server):
    head = _get("/healthz", *(f"X-Field-{i}: f" for i in range(FIELDS_LIMIT + 1)))
    message = _assert_json_error(_exchange(server.port, head), 431, "headers_too_large",
                                 not_echoed="X-Field-")
    assert str(FIELDS_LIMIT) in message


def test_requests_at_the_limits_are_served(server):
    path = "/healthz?q=" + "u" * (LINE_LIMIT - len("GET /healthz?q= HTTP/1.1") - 8)
    status, _, body = _exchange(server.port, _get(path, "Connection: close"))
    assert status == 200 and json.loads(body) == {"status": "ok"}
    fields = [f"X-Field-{i}: f" for i in range(FIELDS_LIMIT - 2)]  # Host and Connection count
    status, _, body = _exchange(server.port, _get("/healthz", "Connection: close", *fields))
    assert status == 200 and json.loads(body) == {"status": "ok"}
