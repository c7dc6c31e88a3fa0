"""Path battery against every cortex route: hostile ids and names get 400/404, nothing touched."""
from urllib.parse import quote

import pytest

from src.app import create_app
from src.utils import provider
from tests.cortex.support import BAD_FILENAMES, BAD_PERSONA_IDS, snapshot

RAW_SEGMENTS = [
    "..", ".", "%2e%2e", "%2E%2E", "%2e%2e%2f", "%2e%2e%2f%2e%2e%2fetc", "..%2f..%2fapp.db",
    "%252e%252e%252f", "%252e%252e%252fapp.db", "%2fetc%2fpasswd", "%2F", "..%5c..%5capp.db",
    "%5c", "default%00", "%00", "memory.md%00", "default%2f", "default%2f..", "%c0%ae%c0%ae",
    "%EF%BD%84%EF%BD%85%EF%BD%86%EF%BD%81%EF%BD%95%EF%BD%8C%EF%BD%94", "d%D0%B5fault",
    "mem%D0%BEry.md", "%EF%BD%8Demory.md", "MEMORY.MD", "memory.md%0a", "abcdefgh%0A",
    "a" * 1000, "%20", "~", "default;x", "*",
]
SEGMENTS = list(dict.fromkeys(RAW_SEGMENTS + [quote(v, safe="") for v in BAD_PERSONA_IDS
                                              + BAD_FILENAMES if isinstance(v, str) and v]))
ABSOLUTE = ["//etc/passwd", "/etc/passwd", "/../../app.db"]


def _requests(pid: str, filename: str):
    """(method, url, kwargs) for every cortex route."""
    base = f"/api/personas/{pid}/cortex"
    file_url = f"{base}/{filename}"
    change = {"json": {"content": "pwned"}, "headers": {"If-Match": "*"}}
    return [
        ("GET", base, {}), ("GET", file_url, {}), ("PUT", file_url, change),
        ("POST", file_url + "/reset", {"headers": {"If-Match": "*"}}),
        ("GET", file_url + "/history", {}), ("GET", file_url + "/history/1", {}),
        ("POST", file_url + "/history/1/restore", {"headers": {"If-Match": "*"}}),
    ]


@pytest.fixture(scope="module")
def battery(tmp_path_factory):
    """One app for the whole battery (each case still checks that nothing changed)."""
    root = tmp_path_factory.mktemp("battery")
    sibling = root / "sibling"
    sibling.mkdir()
    (sibling / "memory.md").write_text("SIBLING SECRET")
    (root / "memory.md").write_text("PARENT SECRET")
    app = create_app({"DATA_DIR": str(root / "data"), "ANTHROPIC_API_KEY": None,
                      "ANTHROPIC_BASE_URL": None, "ANTHROPIC_MAX_RETRIES": 0,
                      "ANTHROPIC_TIMEOUT": 10.0, "CORTEX_WORKER": False, "TESTING": True})
    client = app.test_client()
    client.get("/api/personas/default/cortex")
    return app, client, root


def _revision_state(app):
    row = provider.get_db(app).conn().execute(
        "SELECT COUNT(*), MAX(id) FROM cortex_revisions").fetchone()
    return tuple(row)


def _refused(response) -> bool:
    """Hostile input is a 400 or a 404 (the app never merges slashes, so no redirects)."""
    return response.status_code in (400, 404)


def _assert_refused(battery, requests):
    app, client, root = battery
    before, revisions = snapshot(root), _revision_state(app)
    for method, url, kwargs in requests:
        response = client.open(url, method=method, **kwargs)
        assert _refused(response), (method, url, response.status_code)
        assert response.is_json, url
        body = response.get_data(as_text=True)
        assert "SECRET" not in body and "root:" not in body
    assert snapshot(root) == before
    assert _revision_state(app) == revisions


@pytest.mark.parametrize("segment", SEGMENTS + ABSOLUTE, ids=lambda s: s[:40])
def test_hostile_persona_ids(battery, segment):
    _assert_refused(battery, _requests(segment, "memory.md"))


@pytest.mark.parametrize("segment", SEGMENTS + ABSOLUTE, ids=lambda s: s[:40])
def test_hostile_filenames(battery, segment):
    _assert_refused(battery, _requests("default", segment)[1:])


def test_valid_but_unknown_persona_is_refused_without_creating_files(battery):
    _assert_refused(battery, _requests("abcd1234", "memory.md"))


def test_trailing_slash_and_double_slash(battery):
    _assert_refused(battery, [
        ("GET", "/api/personas/default/cortex/memory.md/", {}),
        ("PUT", "/api/personas/default/cortex/memory.md/", {"json": {"content": "x"}}),
        ("GET", "/api/personas/default//cortex/memory.md", {}),
        ("GET", "/api/personas//default/cortex/memory.md", {}),
        ("GET", "/api/personas/default/cortex//memory.md", {}),
    ])
