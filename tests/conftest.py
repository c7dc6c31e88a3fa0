"""Shared fixtures: an app on a temporary data directory (pytest-flask provides `client`)."""
import logging
import os
import sqlite3
from contextlib import closing

import pytest

from src.app import create_app
from src.utils import provider
from tests.support.chromium import CHROMIUM, chromium_version
from tests.support.key_hygiene import LeakWatch, ScanningMiddleware


def pytest_sessionstart(session):
    """Names the Chromium the browser tests drive on the first line, so a failure report does too
    (written directly, so it shows with -q as well)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"browser tests drive {CHROMIUM}: {chromium_version()}")


# The suite runs in 3 processes, each taking whole files (`--dist loadfile`, scripts/test.sh) in
# collection order. These directories hold the slowest files (real servers, Chromium, crashes),
# so they start first and the quick unit files fill the end, instead of one process finishing a
# minute-long file while the others idle (longest first; docs/development.md#tests).
SLOW_FIRST = ("tests/robustness/", "tests/browser/", "tests/security/", "tests/openapi/",
              "tests/test_fresh_clone.py", "tests/cortex/")


def pytest_collection_modifyitems(items):
    """Files of the `SLOW_FIRST` groups first, in that order; the order within a file and
    among the other files is kept (a stable sort)."""
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)),
                    len(SLOW_FIRST))
    items.sort(key=rank)


@pytest.fixture(autouse=True)
def key_hygiene(caplog):
    """Fails any test after which a key it configured or sent shows up in a response (test
    client, live server, SSE, WebSocket), a log record of any level, or a stored file other
    than secrets.json (tests/support/key_hygiene.py). Checked after the test body (a leak
    fails the test) and again after teardown (a leak then errors it)."""
    caplog.set_level(logging.DEBUG)
    watch = LeakWatch()
    yield watch
    _check_key_hygiene(watch, caplog, ("setup", "call", "teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Runs the key-hygiene check right after the test body, so a leak fails the test itself."""
    result = yield
    funcargs = getattr(item, "funcargs", {})
    watch, caplog = funcargs.get("key_hygiene"), funcargs.get("caplog")
    if watch is not None and caplog is not None:
        _check_key_hygiene(watch, caplog, ("setup", "call"))
    return result


def _check_key_hygiene(watch: LeakWatch, caplog, phases) -> None:
    for when in phases:
        watch.scan_log_records(caplog.records if when == "teardown"
                               else caplog.get_records(when))
    watch.scan_files()
    news = watch.news()
    if news:
        pytest.fail(f"key hygiene: a key leaked\n{news}", pytrace=False)


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
def app(app_config, key_hygiene):
    """The Flask app under test (pytest-flask builds `client` from it); everything it sends is
    scanned for the keys it knows."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ACCESS_TOKEN"):
        key_hygiene.add_secret(app_config.get(name))
    app = create_app(app_config)
    key_hygiene.add_data_dir(app.config["DATA_DIR"])
    app.wsgi_app = ScanningMiddleware(app.wsgi_app, key_hygiene)
    logging.getLogger().setLevel(logging.DEBUG)
    yield app
    provider.shutdown_services(app)


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


@pytest.fixture
def script(claude):
    """Scripts the upstream fake's replies for a test (the app's client is closed at teardown)."""
    from tests.chat.chat_support import Script

    return Script(claude)


@pytest.fixture
def make_session(client):
    """Creates a session over the API and returns it."""

    def create(persona_id: str = "default") -> dict:
        response = client.post("/api/sessions", json={"persona_id": persona_id})
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    return create


@pytest.fixture
def env(app):
    """Services of the app under test plus set-up helpers (tests/cortex/update_support.py)."""
    from tests.cortex.update_support import Env

    return Env(app)


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


@pytest.fixture
def openai_fake():
    """A started OpenAI-compatible fake (tests/fakes/openai_compat.py), closed after the test,
    which fails if a scripted reply crashed inside the fake."""
    from tests.fakes.openai_compat import FakeOpenAI

    fake = FakeOpenAI()
    yield fake
    fake.close()
    if fake.errors:
        raise fake.errors[0]
