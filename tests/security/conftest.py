"""Fixtures for the security tests: an app that requires an access token, and snapshots of
everything the app stores, to prove a refused request wrote nothing."""
import os
import re
import sqlite3
from contextlib import closing

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


@pytest.fixture
def snapshot(data_dir):
    """`snapshot()` -> every table row, every file under the data directory with its bytes."""

    def take() -> dict:
        with closing(sqlite3.connect(data_dir / "app.db")) as conn:
            names = [row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            tables = {name: conn.execute(f'SELECT * FROM "{name}" ORDER BY 1').fetchall()
                      for name in names}
        files = {}
        for root, _, found in os.walk(data_dir):
            for name in found:
                if name.startswith("app.db"):
                    continue
                path = os.path.join(root, name)
                with open(path, "rb") as fh:
                    files[os.path.relpath(path, data_dir)] = fh.read()
        return {"tables": tables, "files": files}

    return take


def fill_path(rule, values: dict) -> str:
    """The URL of `rule` with each argument replaced by `values[name]`."""
    path = rule.rule
    for name in rule.arguments:
        path = re.sub(rf"<(?:[a-z]+:)?{name}>", str(values[name]), path)
    return path
