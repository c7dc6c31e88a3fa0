"""Access tokens worth the name, sign-in limits no crowd can get around, and a gate that runs
before anything a stranger could make expensive."""
import http.client
import os
import subprocess
import sys
from contextlib import closing

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.services.access import COOKIE_NAME
from src.utils.services.token_rules import WeakToken, checked_token
from tests.security.conftest import TOKEN
from tests.support.live_server import LiveServer

WEAK = ["   ", "\t\n", "short-token", "  fifteen-chars  ", "a" * 40, "abab" * 8,
        "abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlk", "aaaaaaaaaaaaaaaaaaaaaabcdefghij",
        "token-with\x00-control-chars"]


@pytest.mark.parametrize("token", WEAK)
def test_a_weak_token_refuses_to_start(app_config, token):
    with pytest.raises(WeakToken):
        create_app({**app_config, "ACCESS_TOKEN": token})
    assert not os.path.exists(os.path.join(app_config["DATA_DIR"], "app.db"))


@pytest.mark.parametrize("token", ["pc-access-token-4f1c9a7e2b6d8035c1e9", "Xk3-pQ9_vL2mZ8wR",
                                   "correct horse battery staple"])
def test_random_looking_tokens_pass(token):
    assert checked_token(token) == token


def test_surrounding_whitespace_is_not_part_of_the_token(app_config):
    app = create_app({**app_config, "ACCESS_TOKEN": f"  {TOKEN}\n"})
    try:
        client = app.test_client()
        assert client.get("/api/personas",
                          headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    finally:
        provider.shutdown_services(app)


def test_the_server_refuses_to_start_on_the_lan_with_a_blank_token(tmp_path):
    env = {**os.environ, "PERSONA_DATA_DIR": str(tmp_path), "PERSONA_HOST": "0.0.0.0",
           "PERSONA_PORT": "1", "PERSONA_ACCESS_TOKEN": "   "}
    with subprocess.Popen([sys.executable, "-m", "src.app"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT) as proc:
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError("the server started with a blank token") from None
    assert proc.returncode == 2
    assert b"PERSONA_ACCESS_TOKEN has 0 characters after trimming" in output


@pytest.fixture
def limited_config(token_config):
    return {**token_config, "ACCESS_FAILURE_LIMIT": 3, "ACCESS_FAILURE_GLOBAL_LIMIT": 5}


def _guess(client, address: str, token: str = "wrong-guess"):
    return client.get("/api/personas", headers={"Authorization": f"Bearer {token}"},
                      environ_base={"REMOTE_ADDR": address})


def test_many_addresses_guessing_in_parallel_hit_a_global_cap(limited_config):
    app = create_app(limited_config)
    try:
        client = app.test_client()
        assert client.post("/signin", json={"token": TOKEN},
                           environ_base={"REMOTE_ADDR": "192.0.2.1"}).status_code == 200
        cookie = client.get_cookie(COOKIE_NAME).value
        client.delete_cookie(COOKIE_NAME)
        for n in range(5):
            assert _guess(client, f"198.51.100.{n}").status_code == 401
        assert _guess(client, "203.0.113.7").status_code == 429
        assert _guess(client, "203.0.113.8", TOKEN).status_code == 429
        client.set_cookie(COOKIE_NAME, cookie)  # a signed-in browser keeps working
        assert client.get("/api/personas").status_code == 200
    finally:
        provider.shutdown_services(app)


def test_failures_counted_by_one_worker_lock_out_in_the_other(limited_config):
    first, second = create_app(limited_config), create_app(limited_config)
    try:
        for app in (first, second, first):
            assert _guess(app.test_client(), "198.51.100.9").status_code == 401
        assert _guess(second.test_client(), "198.51.100.9", TOKEN).status_code == 429
    finally:
        provider.shutdown_services(first)
        provider.shutdown_services(second)


def _headers_only(port: int, method: str, path: str, headers: dict) -> int:
    """Sends a request that announces a body but never sends it; the status, if one comes."""
    with closing(http.client.HTTPConnection("127.0.0.1", port, timeout=10)) as conn:
        conn.putrequest(method, path)
        for name, value in {"Content-Type": "application/json", "Content-Length": "4000",
                            **headers}.items():
            conn.putheader(name, value)
        conn.endheaders()
        return conn.getresponse().status


def test_the_gate_answers_before_reading_a_body(limited_config):
    app = create_app(limited_config)
    try:
        client = app.test_client()
        for _ in range(3):
            client.post("/signin", json={"token": "wrong"})
        with LiveServer(app) as live:
            assert _headers_only(live.port, "POST", "/api/personas", {}) == 401
            assert _headers_only(live.port, "POST", "/api/personas",
                                 {"Authorization": "Bearer wrong-again"}) == 429
            assert _headers_only(live.port, "POST", "/signin", {}) == 429
    finally:
        provider.shutdown_services(app)
