"""The sign-in page and cookie, and the limit on failed attempts per client address."""
import re

import pytest

from src.utils.services.access import COOKIE_NAME
from tests.security.conftest import TOKEN


@pytest.fixture
def app_config(token_config):
    return token_config


def _cookie_header(response) -> str:
    [header] = [h for h in response.headers.getlist("Set-Cookie")
                if h.startswith(f"{COOKIE_NAME}=")]
    return header


def test_json_sign_in_sets_a_strict_cookie_that_is_not_the_token(client):
    response = client.post("/signin", json={"token": TOKEN})
    assert response.status_code == 200 and response.get_json() == {"signed_in": True}
    header = _cookie_header(response)
    value = header.split(";")[0].split("=", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{64}", value) and TOKEN not in header
    attributes = {part.strip().split("=")[0].lower() for part in header.split(";")[1:]}
    assert {"httponly", "path", "samesite", "max-age"} <= attributes
    assert "SameSite=Strict" in header and "Path=/" in header
    assert "secure" not in attributes
    assert client.get("/api/personas").status_code == 200
    assert client.get("/settings").status_code == 200


@pytest.mark.parametrize("https", [{"base_url": "https://localhost"},
                                   {"headers": {"X-Forwarded-Proto": "https"}}])
def test_the_cookie_is_secure_when_the_request_came_over_https(client, https):
    response = client.post("/signin", json={"token": TOKEN}, **https)
    assert "; Secure" in _cookie_header(response)


def test_a_new_token_invalidates_old_cookies(app_config, client):
    from src.app import create_app
    client.post("/signin", json={"token": TOKEN})
    value = client.get_cookie(COOKIE_NAME).value
    other = create_app({**app_config, "ACCESS_TOKEN": TOKEN + "-rotated"}).test_client()
    other.set_cookie(COOKIE_NAME, value)
    assert other.get("/api/personas").status_code == 401


def test_sign_out_clears_the_cookie(client):
    client.post("/signin", json={"token": TOKEN})
    response = client.post("/signout", json={})
    assert response.status_code == 200 and response.get_json() == {"signed_in": False}
    assert "Max-Age=0" in _cookie_header(response)
    assert client.get("/api/personas").status_code == 401


def test_the_form_flow_from_a_page_to_sign_in_and_back(client):
    first = client.get("/settings?persona=default")
    assert first.status_code == 303
    assert first.location == "/signin?next=/settings%3Fpersona%3Ddefault"
    page = client.get(first.location)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Content-Security-Policy" in page.headers
    assert "unsafe-inline" not in page.headers["Content-Security-Policy"]
    assert '<label for="signin-token">Access token</label>' in html
    assert 'id="signin-token" name="token" type="password"' in html
    assert 'name="next" value="/settings?persona=default"' in html
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"\son[a-z]+\s*=", html)

    wrong = client.post("/signin", data={"token": "nope", "next": "/settings"})
    assert wrong.status_code == 401 and 'role="alert"' in wrong.get_data(as_text=True)
    assert 'aria-invalid="true"' in wrong.get_data(as_text=True)
    assert client.get_cookie(COOKIE_NAME) is None

    right = client.post("/signin", data={"token": TOKEN, "next": "/settings?persona=default"})
    assert right.status_code == 303 and right.location == "/settings?persona=default"
    assert client.get("/settings").status_code == 200
    signed_in = client.get("/signin").get_data(as_text=True)
    assert "You are signed in" in signed_in and 'action="/signout"' in signed_in

    out = client.post("/signout", data={})
    assert out.status_code == 303 and out.location == "/signin"
    assert client.get("/").status_code == 303


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example",
                                    "evil.example", "/signin", "javascript:alert(1)",
                                    "/ok\nLocation: https://evil.example"])
def test_sign_in_never_redirects_off_the_site(client, target):
    response = client.post("/signin", data={"token": TOKEN, "next": target})
    assert response.status_code == 303 and response.location == "/"


def test_a_form_that_is_neither_json_nor_a_form_post_is_refused(client):
    response = client.post("/signin", data=f'{{"token": "{TOKEN}"}}', content_type="text/plain")
    assert response.status_code == 415
    assert client.get_cookie(COOKIE_NAME) is None


class TestRateLimit:
    """10 failures a minute per address; after that 429, even for the right token."""

    def test_the_eleventh_failure_is_429_with_retry_after(self, client):
        for attempt in range(10):
            response = client.get("/api/personas", headers={"Authorization": f"Bearer no{attempt}"})
            assert response.status_code == 401, attempt
        locked = client.get("/api/personas", headers={"Authorization": "Bearer again"})
        assert locked.status_code == 429
        assert 1 <= int(locked.headers["Retry-After"]) <= 60
        error = locked.get_json()["error"]
        assert error["code"] == "too_many_attempts" and error["retry_after"] >= 1
        right = client.get("/api/personas", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 429
        assert client.post("/signin", json={"token": TOKEN}).status_code == 429

    def test_sign_in_failures_count_and_the_page_says_why(self, client):
        for _ in range(10):
            assert client.post("/signin", data={"token": "wrong"}).status_code == 401
        page = client.post("/signin", data={"token": TOKEN})
        assert page.status_code == 429 and "Retry-After" in page.headers
        assert "Too many failed attempts" in page.get_data(as_text=True)
        assert client.get_cookie(COOKIE_NAME) is None

    def test_each_address_has_its_own_count(self, client):
        for _ in range(11):
            client.get("/api/personas", headers={"Authorization": "Bearer wrong"},
                       environ_base={"REMOTE_ADDR": "192.0.2.7"})
        mine = client.get("/api/personas", headers={"Authorization": f"Bearer {TOKEN}"},
                          environ_base={"REMOTE_ADDR": "192.0.2.8"})
        assert mine.status_code == 200

    def test_a_signed_in_browser_keeps_working_during_a_lockout(self, client):
        assert client.post("/signin", json={"token": TOKEN}).status_code == 200
        cookie = client.get_cookie(COOKIE_NAME).value
        client.delete_cookie(COOKIE_NAME)
        for _ in range(12):
            client.get("/api/personas", headers={"Authorization": "Bearer guess"})
        assert client.get("/api/personas", headers={"Authorization": "Bearer x"}).status_code \
            == 429
        client.set_cookie(COOKIE_NAME, cookie)
        assert client.get("/api/personas").status_code == 200

    def test_requests_without_credentials_do_not_count(self, client):
        for _ in range(30):
            assert client.get("/api/personas").status_code == 401
        assert client.get("/api/personas",
                          headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
