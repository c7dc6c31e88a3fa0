"""Conformance of the access checks and the sign-in routes, with an access token configured."""
import pytest

from src.utils.openapi import build_document
from tests.openapi.support import Conformance

TOKEN = "openapi-access-token-0123456789"


@pytest.fixture
def app_config(app_config):
    """The app with an access token; failures are limited to 2 per address."""
    return {**app_config, "ACCESS_TOKEN": TOKEN, "ACCESS_FAILURE_LIMIT": 2}


@pytest.fixture
def conform():
    return Conformance(build_document())


def test_access_checks(client, conform):
    conform(client.get("/api/personas"), "GET", "/api/personas")
    conform(client.get("/healthz"), "GET", "/healthz")
    conform(client.post("/api/personas", json={"name": "A"},
                        headers={"Authorization": f"Bearer {TOKEN}",
                                 "Origin": "http://evil.example"}), "POST", "/api/personas")
    conform(client.get("/api/settings", headers={"Authorization": f"Bearer {TOKEN}"}), "GET",
            "/api/settings")
    for _ in range(3):
        last = client.get("/api/settings", headers={"Authorization": "Bearer wrong-token"})
        conform(last, "GET", "/api/settings")
    assert last.status_code == 429


def test_sign_in_routes(client, conform):
    conform(client.get("/signin"), "GET", "/signin")
    conform(client.post("/signin", json={"token": "nope"}), "POST", "/signin")
    conform(client.post("/signin", data={"token": "nope", "next": "/"}), "POST", "/signin")
    conform(client.post("/signin", json={"token": TOKEN}), "POST", "/signin")
    conform(client.post("/signin", json={"token": "nope"}), "POST", "/signin")
    conform(client.post("/signout", json={}), "POST", "/signout")
    conform(client.post("/signout"), "POST", "/signout")
