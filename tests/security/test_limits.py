"""Size limits (DESIGN §9): a body over 1 MiB is a JSON 413 on every route, each field over its
limit a 400 or 413 naming it, and a refused request writes nothing."""
import http.client
import json

import pytest

from src.routes.access import OPEN_BODY_LIMIT, OPEN_ENDPOINTS
from src.routes.portability import UPLOAD_ENDPOINTS
from tests.security.conftest import fill_path

LIMIT = 1024 * 1024
VALUES = {"pid": "default", "sid": "0123456789abcdef", "mid": 1, "filename": "memory.md", "rev": 1,
          "job_id": "0" * 32, "proposal_id": "0" * 32, "entry_id": 1,
          "bid": 1, "eid": 1, "upid": 1}


@pytest.fixture
def session(client) -> dict:
    """A session with the default persona."""
    return client.post("/api/sessions", json={"persona_id": "default"}).get_json()


def _oversized_json() -> bytes:
    body = json.dumps({"name": "x" * LIMIT}).encode()
    assert len(body) > LIMIT
    return body


def _assert_payload_too_large(response, where, limit: int = LIMIT) -> None:
    assert response.status_code == 413, where
    if response.request.method != "HEAD":
        error = response.get_json()["error"]
        assert error["code"] == "payload_too_large" and error["limit"] == limit, where
        assert str(limit) in error["message"]


def test_every_route_refuses_a_body_over_the_limit(app, client, session, snapshot):
    values = {**VALUES, "sid": session["id"]}
    before = snapshot()
    body = _oversized_json()
    tried = 0
    for rule in app.url_map.iter_rules():
        if rule.websocket or rule.endpoint in UPLOAD_ENDPOINTS:
            continue  # file uploads have their own, larger limit (tests/portability)
        path = fill_path(rule, {**values, "filename": "js/chat.js"}
                         if rule.endpoint == "static" else values)
        for method in sorted(rule.methods):
            with client.open(path, method=method, data=body,
                             content_type="application/json") as response:
                open_route = rule.endpoint in OPEN_ENDPOINTS  # reachable without the token
                _assert_payload_too_large(response, (method, path),
                                          OPEN_BODY_LIMIT if open_route else LIMIT)
            tried += 1
    assert tried >= 60
    assert snapshot() == before


def test_a_body_of_exactly_the_limit_is_read(client, snapshot):
    padding = LIMIT - len(json.dumps({"name": ""}).encode())
    body = json.dumps({"name": " " * padding}).encode()
    assert len(body) == LIMIT
    response = client.post("/api/personas", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "name"


def test_a_chunked_body_without_a_length_is_cut_off_at_the_limit(server, snapshot):
    """Over a real socket: no Content-Length, so the server reads up to the limit and stops."""
    before = snapshot()
    body = _oversized_json()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", "/api/personas", body=(body[i:i + 65536]
                                                     for i in range(0, len(body), 65536)),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        response = conn.getresponse()
        data = response.read()
        assert response.status == 413, data
        assert json.loads(data)["error"]["code"] == "payload_too_large"
    finally:
        conn.close()
    assert snapshot() == before


def test_the_chat_stream_refuses_a_large_body_before_any_stream(client, session, snapshot):
    before = snapshot()
    body = json.dumps({"session_id": session["id"], "message": "x" * LIMIT}).encode()
    response = client.post("/api/chat/stream", data=body, content_type="application/json")
    _assert_payload_too_large(response, "chat stream")
    assert response.mimetype == "application/json"
    assert snapshot() == before


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("method,path", [
    ("POST", "/api/personas"), ("PUT", "/api/settings"), ("POST", "/api/chat/stream"),
    ("PUT", "/api/cortex/settings"),
])
def test_deeply_nested_json_is_a_400_not_a_500(client, snapshot, method, path):
    before = snapshot()
    response = client.open(path, method=method, data=NESTED, content_type="application/json",
                           headers={"If-Match": "*"})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["code"] in ("invalid_json", "invalid_setting")
    assert snapshot() == before


def _cortex_put(client, size: int):
    etag = client.get("/api/personas/default/cortex/memory.md").headers["ETag"]
    return client.put("/api/personas/default/cortex/memory.md", json={"content": "m" * size},
                      headers={"If-Match": etag})


def test_cortex_content_over_the_hard_cap_is_413_and_not_written(client, snapshot):
    cap = client.get("/api/personas/default/cortex").get_json()["hard_cap"]
    before = snapshot()
    response = _cortex_put(client, cap + 1)
    assert response.status_code == 413
    error = response.get_json()["error"]
    assert error["code"] == "cortex_file_too_large" and error["limit"] == cap
    assert snapshot() == before
    assert _cortex_put(client, cap).status_code == 200


FIELD_CASES = [
    ("POST", "/api/personas", {"name": "n" * 81}, "name"),
    ("POST", "/api/personas", {"name": "Ok", "description": "d" * 32001}, "description"),
    ("POST", "/api/personas", {"name": "Ok", "greeting": "g" * 16001}, "greeting"),
    ("POST", "/api/personas", {"name": "Ok", "user_name": "u" * 81}, "user_name"),
    ("PUT", "/api/personas/default", {"description": "d" * 32001}, "description"),
    ("PUT", "/api/settings", {"user_name": "u" * 81}, "user_name"),
    ("PUT", "/api/settings", {"model": "m" * 201}, "model"),
    ("PUT", "/api/settings", {"base_url": "http://h/" + "p" * 500}, "base_url"),
    ("PUT", "/api/settings", {"max_tokens": 64_001}, "max_tokens"),
    ("PUT", "/api/settings", {"context_limit": 401}, "context_limit"),
    ("PUT", "/api/settings/api-key", {"api_key": "k" * 513}, "api_key"),
    ("PUT", "/api/cortex/settings", {"idle_minutes": 1441}, "idle_minutes"),
    ("PATCH", "/api/sessions/{sid}", {"title": "t" * 121}, "title"),
    ("PUT", "/api/sessions/{sid}/messages/last", {"content": "c" * 32_001}, "content"),
    ("POST", "/api/chat/stream", {"session_id": "{sid}", "message": "m" * 32_001}, "message"),
]


@pytest.mark.parametrize("method,path,body,field", FIELD_CASES,
                         ids=[f"{c[0]} {c[1]} {c[3]}" for c in FIELD_CASES])
def test_each_field_over_its_limit_is_refused_by_name(client, session, snapshot, method, path,
                                                     body, field):
    path = path.format(sid=session["id"])
    body = {k: (v.format(sid=session["id"]) if v == "{sid}" else v) for k, v in body.items()}
    before = snapshot()
    response = client.open(path, method=method, json=body)
    assert response.status_code == 400, response.get_json()
    assert response.mimetype == "application/json"
    error = response.get_json()["error"]
    assert error.get("field") == field and field in error["message"]
    assert snapshot() == before


def test_the_limits_themselves_are_accepted(client, session):
    """The cases above fail because of the size alone: one less is fine."""
    sid = session["id"]
    assert client.post("/api/personas", json={"name": "n" * 80, "description": "d" * 32000,
                                              "greeting": "g" * 16000,
                                              "user_name": "u" * 80}).status_code == 201
    assert client.patch(f"/api/sessions/{sid}", json={"title": "t" * 120}).status_code == 200
    assert client.put("/api/settings", json={"user_name": "u" * 80, "context_limit": 400,
                                              "max_tokens": 64_000}).status_code == 200
