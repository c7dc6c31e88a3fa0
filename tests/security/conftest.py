"""Fixtures for the security tests: an app that requires an access token, and URL helpers
(`snapshot` of everything the app stores lives in tests/conftest.py)."""
import re

import pytest

TOKEN = "pc-access-token-4f1c9a7e2b6d8035c1e9"
API_KEY = "sk-ant-api03-security-suite-key-7Qx2Lm9Z"


@pytest.fixture
def token_config(app_config):
    """`app_config` plus an access token (and a key, so key hygiene watches it too)."""
    return {**app_config, "ACCESS_TOKEN": TOKEN, "ANTHROPIC_API_KEY": API_KEY}


@pytest.fixture
def bearer() -> dict:
    """The header that carries the token."""
    return {"Authorization": f"Bearer {TOKEN}"}


def fill_path(rule, values: dict) -> str:
    """The URL of `rule` with each argument replaced by `values[name]`."""
    path = rule.rule
    for name in rule.arguments:
        path = re.sub(rf"<(?:[a-z]+:)?{name}>", str(values[name]), path)
    return path
