"""The user persona API under hostile input (every new field: lone surrogates, control
characters, 10 MB, wrong JSON types, unknown fields: a clear 4xx and nothing written), its
avatar (re-encoded, never SVG, capped), and backups holding it all."""
import json
import sqlite3
from contextlib import closing

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.portability.restore import restore_backup
from src.utils.storage import db as storage
from tests.portability.support import png, upload

LONE = "\ud800"
BIG = "x" * (10 * 1024 * 1024)


@pytest.fixture
def made(client) -> dict:
    """A default user persona and a session that uses it."""
    up = client.post("/api/user-personas", json={"name": "Alex", "description": "Hi"})
    assert up.status_code == 201, up.get_json()
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()
    return {"up": up.get_json(), "session": session}


def _bodies(upid: int, sid: str) -> list[tuple[str, str, object]]:
    """(method, path, body) for every new field with every kind of bad value."""
    cases: list[tuple[str, str, object]] = []
    for path, method in (("/api/user-personas", "POST"), (f"/api/user-personas/{upid}", "PATCH")):
        base = {"name": "Ok"} if method == "POST" else {}
        for field in ("name", "description"):
            for bad in (f"a{LONE}b", "a\x07b", "a\x00b", 3, None, True, [], {"x": 1},
                        "y" * 8001 if field == "description" else "n" * 81):
                cases.append((method, path, {**base, field: bad}))
        cases += [(method, path, {**base, "avatar": "x"}), (method, path, {**base, LONE: 1}),
                  (method, path, [base]), (method, path, "name"), (method, path, {})
                  if method == "POST" else (method, path, {"is_default": True})]
    cases += [("POST", "/api/user-personas", {"name": "Ok", "is_default": bad})
              for bad in ("yes", 1, None, [])]
    cases += [("POST", "/api/user-personas", {"name": "one\ntwo"})]
    cases += [("PUT", "/api/user-personas/default", {"id": bad})
              for bad in ("1", 1.5, True, None, [], 0, -1, 2**63, LONE)]
    cases += [("PUT", "/api/user-personas/default", {"id": upid, "extra": 1}),
              ("PUT", "/api/user-personas/default", {})]
    cases += [("PATCH", f"/api/sessions/{sid}", {"user_persona_id": bad})
              for bad in ("1", 1.5, True, [], {}, 0, -3, 2**63, LONE, 999)]
    cases += [("PATCH", f"/api/sessions/{sid}", {"user_persona_id": upid, "title": "x"})]
    return cases


def test_hostile_bodies_are_a_clear_4xx_and_write_nothing(client, made, snapshot):
    before = snapshot()
    for method, path, body in _bodies(made["up"]["id"], made["session"]["id"]):
        response = client.open(path, method=method, data=json.dumps(body),
                               headers={"Content-Type": "application/json"})
        assert 400 <= response.status_code < 500, (method, path, body, response.status_code)
        error = response.get_json()["error"]
        assert error["code"] and error["message"], (method, path, body)
    assert snapshot() == before


def test_a_ten_megabyte_field_or_a_non_json_body_is_refused(client, made, snapshot):
    before = snapshot()
    for method, path, field in (("POST", "/api/user-personas", "description"),
                                ("PATCH", f"/api/user-personas/{made['up']['id']}", "name"),
                                ("PATCH", f"/api/sessions/{made['session']['id']}",
                                 "user_persona_id")):
        response = client.open(path, method=method, json={field: BIG})
        assert response.status_code == 413, (path, response.status_code)
        assert response.get_json()["error"]["code"]
        form = client.open(path, method=method, data={"name": "x"})
        assert form.status_code == 415
    assert snapshot() == before


def test_unknown_ids_are_404_and_write_nothing(client, made, snapshot):
    before = snapshot()
    for method, path in (("GET", "/api/user-personas/999"), ("PATCH", "/api/user-personas/abc"),
                         ("DELETE", "/api/user-personas/0"), ("GET", "/api/user-personas/1x"),
                         ("GET", "/api/user-personas/999/avatar"),
                         ("DELETE", "/api/user-personas/%D9%A3")):
        response = client.open(path, method=method, json={} if method == "PATCH" else None)
        assert response.status_code == 404, (method, path)
        assert response.get_json()["error"]["code"] in ("user_persona_not_found", "not_found")
    missing = client.put("/api/user-personas/default", json={"id": 999})
    assert missing.status_code == 404
    assert snapshot() == before


def test_the_avatar_is_re_encoded_and_svg_or_oversized_pictures_are_refused(client, made,
                                                                           snapshot):
    upid = made["up"]["id"]
    picture = png({"Comment": "secret metadata"}, size=(40, 30))
    done = upload(client, picture, f"/api/user-personas/{upid}/avatar", "me.png", method="put")
    assert done.status_code == 200, done.get_json()
    url = done.get_json()["avatar_url"]
    assert url.startswith(f"/api/user-personas/{upid}/avatar?v=")
    served = client.get(url)
    assert served.status_code == 200 and served.mimetype == "image/png"
    assert served.data != picture and b"secret metadata" not in served.data
    assert "immutable" in served.headers["Cache-Control"]
    before = snapshot()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    for data, status in ((svg, 400), (b"\x89PNG\r\n\x1a\n" + b"0" * 64, 400),
                         (b"x" * (17 * 1024 * 1024), 413)):
        refused = upload(client, data, f"/api/user-personas/{upid}/avatar", method="put")
        assert refused.status_code == status, refused.get_json()
    assert snapshot() == before
    assert client.delete(f"/api/user-personas/{upid}/avatar").get_json()["avatar_url"] is None
    assert client.get(f"/api/user-personas/{upid}/avatar").status_code == 404


def test_a_backup_restores_user_personas_their_avatars_and_each_session_s_choice(
        client, made, tmp_path):
    sam = client.post("/api/user-personas", json={"name": "Sam", "description": "Sails."})
    sam = sam.get_json()
    upload(client, png(size=(20, 20)), f"/api/user-personas/{sam['id']}/avatar", method="put")
    sid = made["session"]["id"]
    client.patch(f"/api/sessions/{sid}", json={"user_persona_id": sam["id"]})
    response = client.get("/api/backup")
    path = tmp_path / "backup.zip"
    path.write_bytes(response.data)
    target = tmp_path / "restored"
    restore_backup(str(path), str(target))
    restored = create_app({"DATA_DIR": str(target), "CORTEX_WORKER": False, "TESTING": True})
    try:
        other = restored.test_client()
        assert other.get("/api/user-personas").get_json() == \
            client.get("/api/user-personas").get_json()
        shown = other.get(f"/api/user-personas/{sam['id']}").get_json()
        assert other.get(shown["avatar_url"]).data == client.get(shown["avatar_url"]).data
        assert other.get(f"/api/sessions/{sid}").get_json()["user_persona_id"] == sam["id"]
    finally:
        provider.shutdown_services(restored)


def test_migration_0041_turns_the_name_setting_into_the_default_user_persona(tmp_path):
    with closing(sqlite3.connect(tmp_path / "app.db")) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, "
                     "applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
        for migration in sorted(storage.MIGRATIONS_DIR.glob("*.sql")):
            if migration.stem >= "0041":
                continue
            for statement in storage._statements(migration.read_text(encoding="utf-8")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (migration.stem,))
        conn.execute("INSERT INTO settings (key, value) VALUES ('app', ?)",
                     (json.dumps({"user_name": " Robin ", "max_tokens": 100}),))
        conn.commit()
        assert "0041_user_personas" in storage.migrate(conn)  # later ones (0042 ...) too
        assert conn.execute("SELECT name, description, is_default FROM user_personas"
                            ).fetchall() == [("Robin", "", 1)]


def test_an_image_bomb_avatar_is_refused_from_its_header_before_decoding(client, made,
                                                                         snapshot):
    """As for a persona's avatar: a picture whose header claims more than the pixel cap is a
    413 `image_bomb` before anything decodes it, and nothing changes."""
    from tests.portability.test_hostile import _set_ihdr_size
    before = snapshot()
    bomb = _set_ihdr_size(png(size=(20, 20)), 50000, 50000)
    refused = upload(client, bomb, f"/api/user-personas/{made['up']['id']}/avatar",
                     method="put")
    assert refused.status_code == 413, refused.get_json()
    assert refused.get_json()["error"]["reason"] == "image_bomb"
    assert snapshot() == before
