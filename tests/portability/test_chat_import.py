"""Chat import (DESIGN §16): a SillyTavern `.jsonl` (files/sillytavern_chat.jsonl, written the way
SillyTavern's `saveChat` writes one, with the date formats its versions used) and our own JSON
export become a conversation of the persona: swipes as sibling branches, dates kept. Imported
messages never trigger a cortex update by themselves."""
import json
import sqlite3
from contextlib import closing

import pytest

from tests.portability.support import ST_CHAT, upload


@pytest.fixture
def persona(client) -> str:
    response = client.post("/api/personas", json={"name": "Seraphina"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def _import(client, pid: str, data: bytes, preview: bool = False, name: str = "chat.jsonl"):
    url = f"/api/personas/{pid}/chats/import" + ("?preview=1" if preview else "")
    return upload(client, data, url, filename=name)


def _tree(data_dir, session_id: str) -> list[dict]:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute(
            "SELECT id, parent_id, role, content, created_at, on_branch, imported, status "
            "FROM messages WHERE session_id = ? ORDER BY id", (session_id,))]


def test_a_sillytavern_chat_becomes_a_conversation_with_swipes_as_branches(client, persona,
                                                                          data_dir):
    response = _import(client, persona, ST_CHAT)
    assert response.status_code == 201, response.get_json()
    session = response.get_json()
    assert session["persona_id"] == persona and session["title"] == "Seraphina (2024-06-06)"
    assert session["summary"] == {
        "format": "sillytavern", "title": "Seraphina (2024-06-06)", "messages": 5, "stored": 7,
        "alternatives": 2, "branch_points": 1, "first_date": "2024-06-06T15:14:00.000Z",
        "last_date": "2024-06-06T15:20:31.004Z", "user_name": "Robin",
        "character_name": "Seraphina", "names": ["Seraphina", "Robin"], "skipped_system": 1,
        "undated": 1}
    rows = _tree(data_dir, session["id"])
    greeting, question, swipe_a, swipe_b, swipe_c, thanks, wards = rows
    assert [r["role"] for r in rows] == ["assistant", "user"] + ["assistant"] * 3 + [
        "user", "assistant"]
    assert greeting["parent_id"] is None and question["parent_id"] == greeting["id"]
    assert {swipe_a["parent_id"], swipe_b["parent_id"], swipe_c["parent_id"]} == {question["id"]}
    assert thanks["parent_id"] == swipe_b["id"] and wards["parent_id"] == thanks["id"]
    assert [r["on_branch"] for r in rows] == [1, 1, 0, 1, 0, 1, 1]
    assert all(r["imported"] == 1 for r in rows)
    assert swipe_b["content"] == "In my glade, deep in Eldoria. Rest; the potion will help."
    assert greeting["content"].endswith("{{user}}. The forest guards this glade.")
    assert [r["created_at"] for r in rows] == [
        "2024-06-06T15:14:00.000Z", "2024-06-06T15:15:02.113Z", "2024-06-06T15:16:00.000Z",
        "2024-06-06T15:17:00.000Z", "2024-06-06T15:18:00.000Z", "2024-06-06T15:20:31.004Z",
        "2024-06-06T15:20:31.004Z"]
    page = client.get(f"/api/sessions/{session['id']}").get_json()
    assert session["active_leaf_id"] == wards["id"] and session["message_count"] == 5
    assert [m["id"] for m in page["messages"]] == [greeting["id"], question["id"], swipe_b["id"],
                                                   thanks["id"], wards["id"]]
    assert page["messages"][2]["siblings"] == [swipe_a["id"], swipe_b["id"], swipe_c["id"]]
    switched = client.put(f"/api/sessions/{session['id']}/active",
                          json={"message_id": swipe_c["id"]})
    assert switched.status_code == 200, switched.get_json()


def test_the_preview_counts_and_changes_nothing(client, persona, snapshot):
    before = snapshot()
    response = _import(client, persona, ST_CHAT, preview=True)
    assert response.status_code == 200, response.get_json()
    summary = response.get_json()
    assert (summary["messages"], summary["stored"], summary["alternatives"]) == (5, 7, 2)
    assert summary["first_date"] == "2024-06-06T15:14:00.000Z"
    assert snapshot() == before


def test_imported_messages_do_not_count_towards_a_cortex_update(client, persona):
    assert _import(client, persona, ST_CHAT * 1).status_code == 201
    status = client.get(f"/api/personas/{persona}/cortex/status")
    assert status.status_code == 200, status.get_json()
    assert status.get_json()["unprocessed"] == 0


def test_our_json_export_round_trips(client, persona, data_dir):
    first = _import(client, persona, ST_CHAT).get_json()
    exported = client.get(f"/api/sessions/{first['id']}/export?format=json")
    assert exported.status_code == 200
    again = _import(client, persona, exported.data, name="conversation.json")
    assert again.status_code == 201, again.get_json()
    second = again.get_json()
    assert second["summary"]["format"] == "persona_cortex"
    assert second["title"] == first["title"]

    def shape(session_id: str) -> list[tuple]:
        rows = _tree(data_dir, session_id)
        index = {r["id"]: i for i, r in enumerate(rows)}
        return [(index.get(r["parent_id"]), r["role"], r["content"], r["created_at"],
                 r["status"], r["on_branch"]) for r in rows]

    assert len(shape(first["id"])) == 7 and shape(second["id"]) == shape(first["id"])
    assert (second["summary"]["stored"], second["summary"]["alternatives"]) == (7, 2)
    page = client.get(f"/api/sessions/{second['id']}").get_json()
    assert [m["content"] for m in page["messages"]] == [
        m["content"] for m in json.loads(exported.data)["messages"]]


def test_an_unknown_persona_is_a_404(client):
    assert _import(client, "nobody", ST_CHAT).status_code == 404
