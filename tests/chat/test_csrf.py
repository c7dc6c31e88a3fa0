"""A form on another site cannot change anything: state-changing endpoints accept only JSON.

Browsers send cross-site forms without a CORS preflight only as POST with
application/x-www-form-urlencoded, multipart/form-data or text/plain bodies (text/plain is the
classic trick for smuggling a JSON-looking body). Each such request must be refused, and the
database, the key file and the cortex directories must be exactly as before.
"""
import re

import pytest

from src.utils.services.secrets import SecretStore

STORED_KEY = "sk-ant-api03-stored-before-the-attack-0000KEEP"
FORM_FIELDS = {"name": "Evil", "persona_id": "default", "title": "pwned", "language": "de",
               "model": "evil-model", "api_key": "sk-ant-api03-attacker-key-123456789"}
JSONISH = ('{"name": "Evil", "persona_id": "default", "title": "pwned", "language": "de", '
           '"api_key": "sk-ant-api03-attacker-key-123456789"}')


@pytest.fixture
def app_config(app_config, data_dir):
    SecretStore(str(data_dir)).save_api_key(STORED_KEY)
    return app_config


@pytest.fixture
def victim(client, make_persona, make_session, add_messages) -> dict:
    """A persona with a session holding two messages, a lorebook with one entry, and a user
    persona."""
    pid = make_persona("Victim")["id"]
    sid = make_session(pid)["id"]
    messages = add_messages(sid, 2)
    book = client.post("/api/world-books", json={"persona_id": pid}).get_json()["id"]
    entry = client.post(f"/api/world-books/{book}/entries", json={"content": "x"}).get_json()
    upid = client.post("/api/user-personas", json={"name": "Victim's person"}).get_json()["id"]
    return {"pid": pid, "sid": sid, "mid": messages[0]["id"], "bid": book, "eid": entry["id"],
            "upid": upid}


@pytest.fixture
def targets(victim):
    """Every state-changing endpoint of personas, sessions and settings, with its method."""
    pid, sid = victim["pid"], victim["sid"]
    return [
        ("POST", "/api/personas"), ("PUT", f"/api/personas/{pid}"),
        ("DELETE", f"/api/personas/{pid}"), ("PUT", "/api/personas/default"),
        ("POST", "/api/sessions"), ("PATCH", f"/api/sessions/{sid}"),
        ("PATCH", f"/api/messages/{victim['mid']}"), ("PUT", f"/api/sessions/{sid}/active"),
        ("DELETE", f"/api/sessions/{sid}"),
        ("PUT", "/api/settings"), ("PUT", "/api/settings/api-key"),
        ("DELETE", "/api/settings/api-key"),
    ]


def _form_requests(method: str):
    """What a cross-site page can send: a POST form, plus the same bodies with the real method."""
    for verb in sorted({"POST", method}):
        yield verb, {"data": FORM_FIELDS, "content_type": "application/x-www-form-urlencoded"}
        yield verb, {"data": FORM_FIELDS, "content_type": "multipart/form-data"}
        yield verb, {"data": JSONISH, "content_type": "text/plain"}
        yield verb, {"data": JSONISH, "content_type": "text/plain;charset=UTF-8"}


def test_cross_site_form_posts_change_nothing(client, targets, snapshot):
    before = snapshot()
    tried = 0
    for method, path in targets:
        for verb, body in _form_requests(method):
            response = client.open(path, method=verb, **body)
            tried += 1
            assert response.status_code in (405, 415), (verb, path, body["content_type"])
            assert response.is_json and "error" in response.get_json()
    assert tried == sum(4 if method == "POST" else 8 for method, _ in targets)
    assert snapshot() == before


def test_no_state_changing_api_route_accepts_a_form(app, client, victim, rows, snapshot):
    """Every POST/PUT/PATCH/DELETE route under /api, including those of other features."""
    rev = rows("SELECT MIN(id) AS rev FROM cortex_revisions WHERE persona_id = ?",
               victim["pid"])[0]["rev"]
    values = {**victim, "filename": "memory.md", "rev": rev, "proposal_id": "0" * 32,
              "entry_id": 1}
    before = snapshot()
    for rule in app.url_map.iter_rules():
        methods = rule.methods & {"POST", "PUT", "PATCH", "DELETE"}
        if not rule.rule.startswith("/api/") or not methods:
            continue
        missing = rule.arguments - set(values)
        assert not missing, f"{rule.rule}: give this test a value for {missing}"
        path = rule.rule
        for name in rule.arguments:
            path = re.sub(rf"<(?:[a-z]+:)?{name}>", str(values[name]), path)
        for method in methods:
            for verb, body in _form_requests(method):
                response = client.open(path, method=verb, **body)
                status = response.status_code
                assert 400 <= status < 500 and status != 404, (verb, path, body["content_type"])
    assert snapshot() == before


def test_the_same_requests_as_json_do_change_state(client, victim, snapshot):
    """Proves the snapshot sees changes, so the tests above can fail."""
    before = snapshot()
    response = client.patch(f"/api/sessions/{victim['sid']}", json={"title": "renamed"})
    assert response.status_code == 200
    assert snapshot() != before
