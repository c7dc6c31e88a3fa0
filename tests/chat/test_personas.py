"""Personas: REST round trips, validation, the shipped default, and deletion with everything."""
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from src.app import create_app
from src.utils.services.settings_service import SETTINGS_KEY
from src.utils.storage import Database
from src.utils.storage.settings import set_setting

SHIPPED = json.loads((Path(__file__).resolve().parents[2] / "src" / "instructions" / "personas"
                      / "default.json").read_text(encoding="utf-8"))
CORTEX_FILES = {"memory.md", "soul.md", "relationship.md"}


def _cortex_dir(data_dir, pid):
    return data_dir / "cortex" / ("default" if pid == "default" else f"custom/{pid}")


def test_default_persona_is_seeded_with_its_cortex(client, rows, data_dir):
    listed = client.get("/api/personas").get_json()["personas"]
    assert [p["id"] for p in listed] == ["default"]
    assert listed[0]["name"] == SHIPPED["en"]["name"]
    assert listed[0]["greeting"] == SHIPPED["en"]["greeting"]
    assert rows("SELECT id, language FROM personas") == [{"id": "default", "language": "en"}]
    assert {p.name for p in _cortex_dir(data_dir, "default").iterdir()} >= CORTEX_FILES


def test_default_persona_follows_the_language_setting(app_config, data_dir):
    db = Database(str(data_dir / "app.db"))
    set_setting(db.conn(), SETTINGS_KEY, {"language": "de"})
    db.conn().close()
    app = create_app(app_config)
    persona = app.test_client().get("/api/personas/default").get_json()
    assert persona["language"] == "de"
    assert persona["description"] == SHIPPED["de"]["description"]


def test_seeding_keeps_an_edited_default(client, app_config):
    assert client.put("/api/personas/default", json={"name": "Mine"}).status_code == 200
    restarted = create_app(app_config).test_client()
    assert restarted.get("/api/personas/default").get_json()["name"] == "Mine"


def test_create_round_trip(client, rows, data_dir):
    body = {"name": "  Ada  ", "description": "A mathematician.\nCurious.", "user_name": "Sam",
            "language": "de", "greeting": "Hallo!"}
    response = client.post("/api/personas", json=body)
    assert response.status_code == 201
    persona = response.get_json()
    assert re.fullmatch(r"[a-z0-9]{12}", persona["id"])
    assert {k: persona[k] for k in body} == {**body, "name": "Ada"}
    assert client.get(f"/api/personas/{persona['id']}").get_json() == persona
    stored = rows("SELECT * FROM personas WHERE id = ?", persona["id"])
    columns = ("id", "name", "description", "user_name", "language", "greeting", "created_at",
               "updated_at")
    assert [{k: row[k] for k in columns} for row in stored] == [{k: persona[k] for k in columns}]
    assert {p.name for p in _cortex_dir(data_dir, persona["id"]).iterdir()} >= CORTEX_FILES
    listed = client.get("/api/personas").get_json()["personas"]
    assert [p["id"] for p in listed] == ["default", persona["id"]]


def test_create_defaults_optional_fields(client):
    persona = client.post("/api/personas", json={"name": "Bo"}).get_json()
    assert (persona["description"], persona["user_name"], persona["greeting"],
            persona["language"]) == ("", "", "", "en")


def test_update_changes_only_given_fields(client, make_persona, rows):
    persona = make_persona(description="old", greeting="hi")
    response = client.put(f"/api/personas/{persona['id']}",
                          json={"description": "new", "id": "ignored", "created_at": "x"})
    assert response.status_code == 200
    updated = response.get_json()
    assert updated["description"] == "new" and updated["greeting"] == "hi"
    assert updated["id"] == persona["id"] and updated["created_at"] == persona["created_at"]
    assert rows("SELECT description FROM personas WHERE id = ?", persona["id"]) == [
        {"description": "new"}]


INVALID = [
    ({}, "name", "validation_error"),
    ({"name": ""}, "name", "validation_error"),
    ({"name": "   "}, "name", "validation_error"),
    ({"name": "x" * 81}, "name", "validation_error"),
    ({"name": "a\nb"}, "name", "validation_error"),
    ({"name": None}, "name", "validation_error"),
    ({"name": 7}, "name", "validation_error"),
    ({"name": "A", "description": "x" * 32001}, "description", "validation_error"),
    ({"name": "A", "user_name": "x" * 81}, "user_name", "validation_error"),
    ({"name": "A", "greeting": "x" * 16001}, "greeting", "validation_error"),
    ({"name": "A", "greeting": "bell\x07"}, "greeting", "validation_error"),
    ({"name": "A", "language": "fr"}, "language", "validation_error"),
    ({"name": "A", "language": None}, "language", "validation_error"),
    ({"name": "A", "colour": "red"}, "colour", "unknown_field"),
]


@pytest.mark.parametrize("body,field,code", INVALID)
def test_create_rejects_bad_input_and_writes_nothing(client, rows, data_dir, body, field, code):
    response = client.post("/api/personas", json=body)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert (error["code"], error["field"]) == (code, field)
    assert field in error["message"]
    assert rows("SELECT id FROM personas") == [{"id": "default"}]
    assert not (data_dir / "cortex" / "custom").exists() or not any(
        (data_dir / "cortex" / "custom").iterdir())


@pytest.mark.parametrize("body,field,code", [case for case in INVALID if case[0]])
def test_update_rejects_bad_input_and_writes_nothing(client, make_persona, rows, body, field,
                                                     code):
    persona = make_persona()
    before = rows("SELECT * FROM personas")
    response = client.put(f"/api/personas/{persona['id']}", json=body)
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field
    assert rows("SELECT * FROM personas") == before


def test_body_must_be_a_json_object(client, rows):
    assert client.post("/api/personas", data="name=x").status_code == 415
    response = client.post("/api/personas", json=["name"])
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "invalid_json"
    assert rows("SELECT id FROM personas") == [{"id": "default"}]


@pytest.mark.parametrize("pid", ["abcdefgh12", "ABCDEFGH12", "short", "a" * 33, "abcd-efgh1",
                                 "default1"])
@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_unknown_or_malformed_persona_is_404(client, pid, method):
    response = getattr(client, method)(f"/api/personas/{pid}", json={"name": "x"})
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "persona_not_found"


def test_delete_removes_persona_sessions_messages_and_cortex(
        client, make_persona, make_session, add_messages, rows, data_dir):
    doomed, kept = make_persona("Doomed"), make_persona("Kept")
    doomed_session = make_session(doomed["id"])
    add_messages(doomed_session["id"], 4)
    kept_session = make_session(kept["id"])
    add_messages(kept_session["id"], 2)
    assert _cortex_dir(data_dir, doomed["id"]).is_dir()
    assert rows("SELECT COUNT(*) AS n FROM cortex_revisions WHERE persona_id = ?",
                doomed["id"])[0]["n"] > 0

    response = client.delete(f"/api/personas/{doomed['id']}")
    assert response.status_code == 200
    assert response.get_json() == {"id": doomed["id"], "deleted": True}
    assert rows("SELECT id FROM personas ORDER BY id") == sorted(
        [{"id": "default"}, {"id": kept["id"]}], key=lambda r: r["id"])
    assert rows("SELECT id FROM sessions") == [{"id": kept_session["id"]}]
    assert rows("SELECT DISTINCT persona_id FROM messages") == [{"persona_id": kept["id"]}]
    assert not _cortex_dir(data_dir, doomed["id"]).exists()
    assert rows("SELECT COUNT(*) AS n FROM cortex_revisions WHERE persona_id = ?",
                doomed["id"]) == [{"n": 0}]
    assert _cortex_dir(data_dir, kept["id"]).is_dir()
    assert client.get(f"/api/personas/{doomed['id']}").status_code == 404
    assert client.get(f"/api/sessions/{doomed_session['id']}").status_code == 404


def test_default_persona_cannot_be_deleted(client, rows, data_dir):
    response = client.delete("/api/personas/default")
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "default_persona"
    assert rows("SELECT id FROM personas") == [{"id": "default"}]
    assert _cortex_dir(data_dir, "default").is_dir()


PERSONA_KEYS = {"id", "name", "user_name", "language", "description", "greeting", "personality",
                "scenario", "example_dialogue", "creator_notes", "system_prompt",
                "post_history_instructions", "alternate_greetings", "tags", "extensions", "card",
                "use_card_prompts", "model", "avatar_url", "created_at", "updated_at"}


def test_the_persona_answers_keep_their_keys_and_values(client):
    """Personas are models now (docs/development.md, "Typed resources"): every answer keeps the
    keys the stored row gave (no defaulted key added, none dropped), and a card's open objects
    come back exactly as sent (nested, unicode, numbers; passes on the dicts before too)."""
    card = {"nickname": "Mi", "character_book": {"entries": [{"keys": ["ä"], "n": 1.5,
                                                              "big": 2 ** 63, "z": None}]},
            "creator": "x", "extra": {"deep": [[{"a": True}]]}}
    extensions = {"depth_prompt": {"prompt": "hi", "depth": 4}, "world": "w", "ü": [1, 2.25]}
    created = client.post("/api/personas", json={
        "name": "Mira", "alternate_greetings": ["A", "B"], "tags": ["t"], "card": card,
        "extensions": extensions, "use_card_prompts": False, "model": "claude-x"})
    assert created.status_code == 201 and set(created.get_json()) == PERSONA_KEYS
    persona = created.get_json()
    assert (persona["card"], persona["extensions"]) == (card, extensions)
    got = client.get(f"/api/personas/{persona['id']}")
    assert set(got.get_json()) == PERSONA_KEYS and got.get_json() == persona
    assert got.data == created.data
    listed = client.get("/api/personas").get_json()
    assert set(listed) == {"personas"}
    assert [set(p) for p in listed["personas"]] == [PERSONA_KEYS, PERSONA_KEYS]
    assert listed["personas"][1] == persona
    updated = client.put(f"/api/personas/{persona['id']}", json={"model": "", "tags": []})
    assert set(updated.get_json()) == PERSONA_KEYS
    assert (updated.get_json()["model"], updated.get_json()["tags"]) == (None, [])


def test_a_persona_whose_language_another_tool_set_still_reads(client, data_dir):
    """Only en/de are ever written by the app, but the row is plain SQLite: a language set by
    another tool reads as English instead of failing every persona answer with a 500."""
    created = client.post("/api/personas", json={"name": "Lune"}).get_json()
    with closing(sqlite3.connect(data_dir / "app.db")) as conn, conn:
        conn.execute("UPDATE personas SET language = 'fr' WHERE id = ?", (created["id"],))
    got = client.get(f"/api/personas/{created['id']}")
    assert got.status_code == 200 and got.get_json()["language"] == "en"
    listed = client.get("/api/personas")
    assert listed.status_code == 200
    assert created["id"] in [p["id"] for p in listed.get_json()["personas"]]
