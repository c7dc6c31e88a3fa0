"""The access token (DESIGN §9): required on every route once configured, by header or cookie;
wrong ones refused alike and rate-limited per client address."""
import pytest

from src.utils.services.access import COOKIE_NAME
from tests.security.conftest import TOKEN, fill_path

VALUES = {"pid": "default", "sid": "0123456789abcdef", "mid": 1, "filename": "memory.md", "rev": 1,
          "job_id": "0" * 32, "proposal_id": "0" * 32, "entry_id": 1,
          "bid": 1, "eid": 1, "upid": 1}
OPEN = {("GET", "/healthz"), ("GET", "/signin"), ("POST", "/signin"), ("POST", "/signout")}
OPEN_PATHS = {path for _, path in OPEN}
SIGNIN_ASSETS = ("css/base.css", "css/signin.css", "js/signin.js", "img/icon.svg")
PAGES = ("/", "/settings", "/api/docs")


@pytest.fixture
def app_config(token_config):
    return {**token_config, "ACCESS_FAILURE_LIMIT": 10_000, "ACCESS_FAILURE_GLOBAL_LIMIT": 10_000}


OPEN_ENDPOINTS = {"health.healthz", "access.signin_form", "access.sign_in", "access.sign_out"}


def _requests(app, endpoints: set | None = None):
    """(method, path) for every HTTP route and method of the app (WebSockets: test_access_ws)."""
    for rule in app.url_map.iter_rules():
        if rule.websocket:
            continue
        if endpoints is not None:
            endpoints.add(rule.endpoint)
        values = {**VALUES, "filename": "js/chat.js"} if rule.endpoint == "static" else VALUES
        for method in sorted(rule.methods):
            yield method, fill_path(rule, values)


def test_every_route_refuses_a_request_without_the_token(app, client):
    endpoints, checked = set(), 0
    for method, path in _requests(app, endpoints):
        if (method, path) in OPEN or (method in ("HEAD", "OPTIONS")
                                      and (("GET", path) in OPEN or ("POST", path) in OPEN)):
            continue
        response = client.open(path, method=method, json={})
        checked += 1
        if path in PAGES and method in ("GET", "HEAD"):
            assert response.status_code == 303, path
            assert response.location == f"/signin?next={path}"
        else:
            assert response.status_code == 401, (method, path, response.status_code)
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            if method != "HEAD":
                assert response.get_json()["error"]["code"] == "unauthorized"
    websockets = {r.endpoint for r in app.url_map.iter_rules() if r.websocket}
    assert endpoints | OPEN_ENDPOINTS | websockets == {r.endpoint for r in app.url_map.iter_rules()}
    assert checked >= 2 * (len(endpoints) - len(OPEN_ENDPOINTS))


def test_every_route_accepts_the_token_in_the_header(app, client, bearer):
    for method, path in _requests(app):
        if (method, path) == ("POST", "/signin"):
            continue
        with client.open(path, method=method, json={}, headers=bearer) as response:
            assert response.status_code not in (401, 403, 429), (method, path)


def test_a_wrong_token_is_refused_on_every_route(app, client):
    for method, path in _requests(app):
        if path in OPEN_PATHS:
            continue
        with client.open(path, method=method, json={},
                         headers={"Authorization": f"Bearer {TOKEN}x"}) as response:
            assert response.status_code in (401, 303), (method, path)


def test_unknown_paths_do_not_reveal_themselves_without_the_token(client, bearer):
    assert client.get("/api/nope").status_code == 401
    assert client.get("/api/nope", headers=bearer).status_code == 404


@pytest.mark.parametrize("authorization", [
    "", "Bearer", "Bearer ", f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Bearer x{TOKEN}",
    f"Bearer {TOKEN[:-1]}X", f"Bearer {TOKEN.upper()}", "Bearer tökén-ünïcode-✓",
    f"Bearer {'a' * 10_000}", f"Basic {TOKEN}", TOKEN, f"Token {TOKEN}",
])
def test_wrong_tokens_of_every_shape_are_refused_alike(client, authorization):
    response = client.get("/api/personas", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "invalid_token"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_bearer_scheme_is_case_insensitive(client, scheme):
    response = client.get("/api/personas", headers={"Authorization": f"{scheme} {TOKEN}"})
    assert response.status_code == 200


def test_healthz_stays_open_and_says_nothing_more(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_only_the_sign_in_pages_assets_are_served_without_the_token(client):
    for name in SIGNIN_ASSETS:
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        response.close()
    for name in ("js/chat.js", "js/settings.js", "css/chat.css", "js/lib/api.js", "js/api_docs.js",
                 "vendor/swagger-ui/swagger-ui-bundle.js"):
        assert client.get(f"/static/{name}").status_code == 401, name


def test_the_access_token_never_reaches_a_response_or_the_logs(client, bearer, caplog):
    client.post("/signin", json={"token": TOKEN})
    for path in ("/", "/settings", "/signin", "/api/settings", "/api/personas"):
        response = client.get(path, headers=bearer)
        assert TOKEN.encode() not in response.get_data()
        assert TOKEN not in str(response.headers)
    assert TOKEN not in caplog.text


class TestWithoutToken:
    """No token configured: the app is open, but only to localhost."""

    @pytest.fixture
    def app_config(self, app_config):
        return {**app_config, "ACCESS_TOKEN": None}

    def test_everything_is_open_on_localhost(self, client):
        assert client.get("/api/personas").status_code == 200
        assert client.get("/").status_code == 200

    def test_sign_in_is_off(self, client):
        assert client.get("/signin").status_code == 303
        response = client.post("/signin", json={"token": TOKEN})
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "sign_in_disabled"

    @pytest.mark.parametrize("host", ["localhost", "localhost:5000", "127.0.0.1:5000",
                                      "127.8.9.10", "[::1]:5000"])
    def test_loopback_host_names_are_served(self, client, host):
        assert client.get("/api/personas", headers={"Host": host}).status_code == 200

    @pytest.mark.parametrize("host", ["evil.example", "evil.example:5000", "192.168.1.20:5000",
                                      "localhost.evil.example", "127.0.0.1.nip.io", "[::2]"])
    def test_other_host_names_are_refused_against_dns_rebinding(self, client, host):
        response = client.get("/api/personas", headers={"Host": host})
        assert response.status_code == 403
        assert response.get_json()["error"]["code"] == "forbidden_host"


def test_with_a_token_any_host_name_may_be_used(client, bearer):
    response = client.get("/api/personas", headers={**bearer, "Host": "persona.lan:5000"})
    assert response.status_code == 200
    assert client.get("/api/personas", headers={"Host": "persona.lan"}).status_code == 401


def test_a_cookie_from_an_old_token_is_refused_and_cleared(client):
    client.set_cookie(COOKIE_NAME, "0" * 64)
    response = client.get("/api/personas")
    assert response.status_code == 401
    assert response.get_json()["error"]["code"] == "invalid_token"
    cleared = response.headers.getlist("Set-Cookie")
    assert any(c.startswith(f"{COOKIE_NAME}=;") and "Max-Age=0" in c for c in cleared)
    page = client.get("/settings")
    assert page.status_code == 303 and page.location.startswith("/signin")
