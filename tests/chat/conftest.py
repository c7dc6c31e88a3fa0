"""Fixtures for the chat tests: reading state straight from SQLite, and quick set-up helpers
(`script` and `make_session` are shared with other directories: tests/conftest.py)."""
import sqlite3
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.storage.messages import add_message


@pytest.fixture
def rows(data_dir):
    """`rows(sql, *params)` -> list of dicts read from the app's database file."""

    def read(sql: str, *params) -> list[dict]:
        with closing(sqlite3.connect(data_dir / "app.db")) as conn:
            conn.row_factory = sqlite3.Row
            return [dict(row) for row in conn.execute(sql, params)]

    return read


@pytest.fixture
def make_persona(client):
    """Creates a persona over the API and returns it."""

    def create(name: str = "Ada", **fields) -> dict:
        response = client.post("/api/personas", json={"name": name, **fields})
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    return create


@pytest.fixture
def add_messages(app):
    """`add_messages(session_id, n)` stores n alternating user/assistant messages; returns them."""

    def add(session_id: str, n: int, start: int = 0) -> list[dict]:
        conn = provider.get_db(app).conn()
        return [add_message(conn, session_id, "user" if i % 2 == 0 else "assistant", f"m{i}")
                for i in range(start, start + n)]

    return add


@pytest.fixture
def claude(request):
    """The upstream fake: FakeClaude, or FakeOpenAI when a test is parametrised with
    `BOTH_PROVIDERS` (indirect "openai_compatible"); closed after the test."""
    from tests.fakes.claude import FakeClaude
    from tests.fakes.openai_compat import FakeOpenAI

    fake = FakeOpenAI() if getattr(request, "param", "anthropic") == "openai_compatible" \
        else FakeClaude()
    yield fake
    fake.close()
    if fake.errors:
        raise fake.errors[0]
