"""Requests from another site (DESIGN §9): state-changing requests and WebSocket upgrades with a
foreign Origin, or marked cross-site by the browser, are refused with 403 and change nothing."""
import pytest

from tests.security.conftest import TOKEN, fill_path

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
FOREIGN = ["http://evil.example", "http://localhost:5001", "https://localhost", "null",
           "http://localhost.evil.example", "http://127.0.0.1"]
BODIES = {"/api/personas": {"name": "Mallory"}, "/api/settings": {"user_name": "pwned"},
          "/api/cortex/settings": {"enabled": False}}


@pytest.fixture
def values(client) -> dict:
    """Real ids, so a request that got through would change something."""
    pid = client.post("/api/personas", json={"name": "Target"}).get_json()["id"]
    sid = client.post("/api/sessions", json={"persona_id": pid}).get_json()["id"]
    return {"pid": pid, "sid": sid, "mid": 1, "filename": "memory.md", "rev": 1,
            "job_id": "0" * 32, "proposal_id": "0" * 32, "entry_id": 1, "bid": 1, "eid": 1, "upid": 1}


def _state_changing(app, values):
    for rule in app.url_map.iter_rules():
        for method in sorted(rule.methods & STATE_CHANGING):
            path = fill_path(rule, values)
            yield method, path, BODIES.get(path, {"content": "x", "title": "t"})


@pytest.mark.parametrize("origin", FOREIGN)
def test_a_foreign_origin_changes_nothing_anywhere(app, client, values, snapshot, origin):
    before = snapshot()
    tried = 0
    for method, path, body in _state_changing(app, values):
        response = client.open(path, method=method, json=body,
                               headers={"Origin": origin, "If-Match": "*"})
        tried += 1
        assert response.status_code == 403, (method, path)
        assert response.get_json()["error"]["code"] == "forbidden_origin"
    assert tried >= 20
    assert snapshot() == before


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "null"},
    {"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost"},
])
def test_a_request_the_browser_marks_as_from_another_site_is_refused(client, snapshot, headers):
    before = snapshot()
    response = client.post("/api/personas", json={"name": "Mallory"}, headers=headers)
    assert response.status_code == 403
    assert snapshot() == before


@pytest.mark.parametrize("headers", [
    {}, {"Origin": "http://localhost"}, {"Origin": "http://LOCALHOST:80"},
    {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"}, {"Sec-Fetch-Site": "none"},
    {"Sec-Fetch-Site": "same-origin", "Origin": "null"},
])
def test_our_own_pages_and_clients_without_origin_may_change_things(client, headers):
    """`Origin: null` with `Sec-Fetch-Site: same-origin` is what a browser sends for a POST from
    a page of ours, whose Referrer-Policy is no-referrer."""
    response = client.post("/api/personas", json={"name": "Ada"}, headers=headers)
    assert response.status_code == 201


def test_reading_is_not_origin_checked(client):
    response = client.get("/api/personas", headers={"Origin": "http://evil.example"})
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response.headers


def test_the_origin_must_match_the_port_the_request_was_sent_to(client):
    headers = {"Host": "localhost:5000"}
    ok = client.post("/api/personas", json={"name": "A"},
                     headers={**headers, "Origin": "http://localhost:5000"})
    assert ok.status_code == 201
    other = client.post("/api/personas", json={"name": "B"},
                        headers={**headers, "Origin": "http://localhost:5001"})
    assert other.status_code == 403


class TestBehindAProxy:
    """TLS ends at a reverse proxy; the app sees http and the proxy's forwarding headers."""

    @pytest.fixture
    def app_config(self, token_config):
        return token_config

    def test_the_https_origin_of_the_proxy_is_our_own(self, client):
        headers = {"Authorization": f"Bearer {TOKEN}", "Host": "persona.lan",
                   "Origin": "https://persona.lan"}
        assert client.post("/api/personas", json={"name": "A"}, headers=headers).status_code \
            == 403
        response = client.post("/api/personas", json={"name": "A"},
                               headers={**headers, "X-Forwarded-Proto": "https"})
        assert response.status_code == 201

    def test_a_forwarded_host_counts_too(self, client):
        headers = {"Authorization": f"Bearer {TOKEN}", "Host": "127.0.0.1:5000",
                   "X-Forwarded-Host": "persona.lan:8443", "X-Forwarded-Proto": "https"}
        ok = client.post("/api/personas", json={"name": "A"},
                         headers={**headers, "Origin": "https://persona.lan:8443"})
        assert ok.status_code == 201
        bad = client.post("/api/personas", json={"name": "A"},
                          headers={**headers, "Origin": "https://evil.example"})
        assert bad.status_code == 403

    def test_a_foreign_origin_is_refused_before_the_token_counts_as_a_failure(self, client):
        for _ in range(15):
            response = client.post("/signin", json={"token": "guess"},
                                   headers={"Origin": "http://evil.example"})
            assert response.status_code == 403
        assert client.post("/signin", json={"token": TOKEN}).status_code == 200
