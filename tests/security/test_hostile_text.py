"""Hostile text over HTTP: a lone surrogate ("\\ud800", valid JSON, not encodable as UTF-8) in any
field is a 400 `validation_error` naming the field, and nothing is written; control characters
follow the documented rule (refused in names and titles, kept in bodies)."""
import json

import pytest

from tests.security.conftest import fill_path

LONE = "\ud800"
VALUES = {"pid": "default", "sid": "0123456789abcdef", "mid": 1, "filename": "memory.md", "rev": 1,
          "job_id": "0" * 32, "proposal_id": "0" * 32, "entry_id": 1,
          "bid": 1, "eid": 1, "upid": 1}


@pytest.fixture
def session(client) -> dict:
    """A session with the default persona."""
    return client.post("/api/sessions", json={"persona_id": "default"}).get_json()


def _cases(sid: str) -> list[tuple[str, str, dict, str]]:
    persona = [("POST", "/api/personas", {"name": "Ada", field: f"a{LONE}b"}, field)
               for field in ("description", "user_name", "greeting")]
    persona += [("PUT", "/api/personas/default", {field: LONE}, field)
                for field in ("name", "description", "user_name", "greeting", "language")]
    return persona + [
        ("POST", "/api/personas", {"name": LONE}, "name"),
        ("PATCH", f"/api/sessions/{sid}", {"title": f"Trip {LONE}"}, "title"),
        ("PUT", "/api/settings", {"user_name": LONE}, "user_name"),
        ("PUT", "/api/settings", {"model": LONE}, "model"),
        ("PUT", "/api/settings/api-key", {"api_key": "sk-ant-" + LONE * 20}, "api_key"),
        ("POST", "/api/chat/stream", {"session_id": sid, "message": f"Hi {LONE}"}, "message"),
        ("PUT", f"/api/sessions/{sid}/messages/last", {"content": LONE}, "content"),
        ("PUT", "/api/personas/default/cortex/memory.md", {"content": f"# M\n{LONE}\n"},
         "content"),
        ("PUT", "/api/cortex/settings", {"frequency": LONE}, "frequency"),
        ("POST", "/api/sessions", {"persona_id": LONE}, "persona_id"),
        ("PUT", "/api/personas/default", {"name": "Ada", "tags": [{"x": LONE}]}, "tags[0].x"),
        ("PUT", "/api/personas/default", {LONE: "Ada"}, "\\ud800"),
    ]


def test_a_lone_surrogate_in_any_field_is_a_validation_error_naming_it(client, session,
                                                                       snapshot):
    client.post(f"/api/sessions/{session['id']}/messages/last", json={})  # nothing to edit yet
    before = snapshot()
    for method, path, body, field in _cases(session["id"]):
        response = client.open(path, method=method, data=json.dumps(body),
                               headers={"Content-Type": "application/json", "If-Match": '"1"'})
        where = f"{method} {path} {field}"
        assert response.status_code == 400, (where, response.get_data(as_text=True))
        error = response.get_json()["error"]
        assert error["code"] == "validation_error", where
        assert error["field"] == field and error["message"].startswith(f"{field}: "), where
        assert "Unicode" in error["message"], where
    assert snapshot() == before


def test_raw_surrogate_bytes_in_the_body_are_refused_like_the_escape(client, snapshot):
    before = snapshot()
    body = b'{"name": "A\xed\xa0\x80"}'
    response = client.post("/api/personas", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "name"
    assert snapshot() == before


def test_no_route_answers_a_lone_surrogate_with_a_server_error(app, client, session, snapshot):
    values = {**VALUES, "sid": session["id"]}
    before = snapshot()
    tried = 0
    for rule in app.url_map.iter_rules():
        for method in sorted((rule.methods or set()) & {"POST", "PUT", "PATCH"}):
            if not rule.rule.startswith("/api/"):
                continue
            tried += 1
            response = client.open(fill_path(rule, values), method=method,
                                   data=json.dumps({"x": LONE}),
                                   headers={"Content-Type": "application/json",
                                            "If-Match": '"1"'})
            assert response.status_code < 500, (method, rule.rule)
            if response.status_code == 400:
                assert response.get_json()["error"]["code"] == "validation_error", rule.rule
    assert tried >= 12
    assert snapshot() == before


@pytest.mark.parametrize("field", ["name", "user_name"])
@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\n"])
def test_control_characters_are_refused_in_names(client, field, char):
    body = {"name": "Ada", field: f"A{char}B"}
    response = client.post("/api/personas", json=body)
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field


def test_tabs_and_line_breaks_are_kept_in_descriptions_and_other_c0_is_refused(client):
    kept = client.post("/api/personas", json={"name": "Ada", "description": "a\tb\r\nc"})
    assert kept.status_code == 201 and kept.get_json()["description"] == "a\tb\r\nc"
    refused = client.post("/api/personas", json={"name": "Ada", "description": "a\x1b[31m"})
    assert refused.status_code == 400 and refused.get_json()["error"]["field"] == "description"


def test_other_unicode_passes_unchanged(client):
    name = "Zoë 😀 \u200d\u2028"[:-1]
    response = client.post("/api/personas", json={"name": name, "greeting": "Hallo\u2028Welt"})
    assert response.status_code == 201, response.get_json()
    created = client.get(f"/api/personas/{response.get_json()['id']}").get_json()
    assert created["name"] == name and created["greeting"] == "Hallo\u2028Welt"
