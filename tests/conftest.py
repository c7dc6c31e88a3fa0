"""Shared fixtures: an app on a temporary data directory (pytest-flask provides `client`)."""
import pytest

from src.app import create_app


@pytest.fixture
def data_dir(tmp_path):
    """A fresh data directory per test; no test ever touches real user data."""
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def app_config(data_dir):
    """The test configuration; tests may extend it before `app` is created."""
    return {
        "DATA_DIR": str(data_dir),
        "ANTHROPIC_API_KEY": None,
        "ANTHROPIC_BASE_URL": None,
        "ANTHROPIC_MAX_RETRIES": 0,
        "ANTHROPIC_TIMEOUT": 10.0,
        "CORTEX_WORKER": False,
        "TESTING": True,
    }


@pytest.fixture
def app(app_config):
    """The Flask app under test (pytest-flask builds `client` from it)."""
    return create_app(app_config)


@pytest.fixture
def server(app):
    """The app served by a real threaded HTTP server (WebSockets included) on a free port."""
    from tests.support.live_server import LiveServer

    with LiveServer(app) as live:
        yield live


@pytest.fixture
def claude():
    """A started Claude fake (tests/fakes/claude.py); closed after the test, which fails if a
    scripted reply crashed inside the fake."""
    from tests.fakes.claude import FakeClaude

    fake = FakeClaude()
    yield fake
    fake.close()
    if fake.errors:
        raise fake.errors[0]
