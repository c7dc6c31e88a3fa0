"""The WebSocket upgrade over a real socket: the token, the sign-in cookie and the Origin."""
import json
import urllib.request

import pytest
import websocket

from src.utils.services.access import COOKIE_NAME
from tests.security.conftest import TOKEN

TIMEOUT = 10


def _connect(server, **options):
    return websocket.create_connection(server.ws_url + "/ws/chat", timeout=TIMEOUT, **options)


def _refused(server, **options) -> int:
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        _connect(server, **options)
    return refused.value.status_code


def _subscribed(ws) -> bool:
    """True when the socket works: a subscribe frame is answered."""
    ws.send(json.dumps({"type": "subscribe", "persona_id": "default"}))
    return json.loads(ws.recv()) == {"type": "subscribed", "persona_id": "default"}


class TestWithToken:

    @pytest.fixture
    def app_config(self, token_config):
        return token_config

    def test_the_upgrade_needs_the_token(self, server):
        assert _refused(server) == 401
        assert _refused(server, header=[f"Authorization: Bearer {TOKEN}-wrong"]) == 401
        assert _refused(server, cookie=f"{COOKIE_NAME}={'0' * 64}") == 401

    def test_the_token_in_the_header_opens_the_socket(self, server):
        ws = _connect(server, header=[f"Authorization: Bearer {TOKEN}"])
        try:
            assert _subscribed(ws)
        finally:
            ws.close()

    def test_the_sign_in_cookie_opens_the_socket(self, server):
        request = urllib.request.Request(server.url + "/signin", method="POST",
                                         data=json.dumps({"token": TOKEN}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            cookie = response.headers["Set-Cookie"].split(";")[0]
        ws = _connect(server, cookie=cookie)
        try:
            assert _subscribed(ws)
        finally:
            ws.close()

    def test_the_origin_is_checked_even_with_the_token(self, server):
        status = _refused(server, header=[f"Authorization: Bearer {TOKEN}"],
                          origin="http://evil.example")
        assert status == 403


class TestOrigin:

    @pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://localhost:1",
                                        "https://127.0.0.1"])
    def test_a_foreign_origin_cannot_open_the_socket(self, server, origin):
        assert _refused(server, origin=origin) == 403

    def test_a_socket_the_browser_marks_cross_site_is_refused(self, server):
        assert _refused(server, header=["Sec-Fetch-Site: cross-site"]) == 403

    @pytest.mark.parametrize("options", [{}, {"suppress_origin": True},
                                         {"origin": "http://127.0.0.1:{port}"}])
    def test_our_own_origin_and_clients_without_one_are_served(self, server, options):
        if "origin" in options:
            options = {"origin": options["origin"].format(port=server.port)}
        ws = _connect(server, **options)
        try:
            assert _subscribed(ws)
        finally:
            ws.close()
