"""One persona as an archive (DESIGN §12): the persona, avatar, sessions, messages and the full
cortex history; importing creates a new persona with new ids and remapped references."""
import io
import json
import sqlite3
import zipfile
from contextlib import closing

import pytest

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.portability.support import V3_CARD, b64, png, upload


@pytest.fixture
def source(app, client):
    """An imported persona with two sessions, messages, an AI revision and a processed mark."""
    persona = upload(client, png({"ccv3": b64(V3_CARD)})).get_json()
    pid = persona["id"]
    db = provider.get_db(app)
    sessions = [client.post("/api/sessions", json={"persona_id": pid}).get_json()["id"]
                for _ in range(2)]
    client.patch(f"/api/sessions/{sessions[0]}", json={"title": "First night"})
    conn = db.conn()
    ids = [add_message(conn, sessions[0], "user", "I am Sam.")["id"],
           add_message(conn, sessions[0], "assistant", "Welcome, Sam.")["id"],
           add_message(conn, sessions[1], "user", "Back again.")["id"]]
    cortex = provider.get_cortex_service(app)
    cortex.write_file(pid, "memory.md", "Sam came by.", author="ai",
                      message_range=(ids[0], ids[1]), summary="Met Sam")
    cortex.write_file(pid, "soul.md", "I am curious.")
    conn.execute("INSERT INTO cortex_state (persona_id, last_processed_id, updated_at) "
                 "VALUES (?, ?, 'now')", (pid, ids[1]))
    return {"persona": client.get(f"/api/personas/{pid}").get_json(), "sessions": sessions,
            "messages": ids}


def _archive(client, pid: str) -> bytes:
    response = client.get(f"/api/personas/{pid}/export?format=archive&include_memories=1")
    assert response.status_code == 200, response.get_data()[:200]
    return response.data


def _rows(data_dir, sql: str, *params) -> list:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        return conn.execute(sql, params).fetchall()


def test_an_archive_imports_as_a_new_persona_with_its_history(client, source, data_dir):
    old = source["persona"]
    response = upload(client, _archive(client, old["id"]), filename="aria.persona.zip")
    assert response.status_code == 201, response.get_json()
    new = response.get_json()
    assert new["id"] != old["id"]
    same = [k for k in old if k not in ("id", "avatar_url", "created_at", "updated_at")]
    assert {k: new[k] for k in same} == {k: old[k] for k in same}
    assert client.get(new["avatar_url"]).data == client.get(old["avatar_url"]).data
    sessions = client.get(f"/api/sessions?persona_id={new['id']}").get_json()["sessions"]
    assert sorted(s["title"] for s in sessions) == ["", "First night"]
    assert not {s["id"] for s in sessions} & set(source["sessions"])
    texts = _rows(data_dir, "SELECT m.content, s.title FROM messages m JOIN sessions s "
                            "ON s.id = m.session_id WHERE m.persona_id = ? ORDER BY m.id", new["id"])
    assert texts == [("I am Sam.", "First night"), ("Welcome, Sam.", "First night"),
                     ("Back again.", "")]
    new_ids = [r[0] for r in _rows(data_dir, "SELECT id FROM messages WHERE persona_id = ? "
                                             "ORDER BY id", new["id"])]
    for filename in ("memory.md", "soul.md", "relationship.md"):
        def history(pid, filename=filename):
            revs = client.get(f"/api/personas/{pid}/cortex/{filename}/history").get_json()
            return [(r["author"], r["summary"], r["sha256"]) for r in revs["revisions"]]
        assert history(new["id"]) == history(old["id"])
    ai = _rows(data_dir, "SELECT message_from, message_to FROM cortex_revisions "
                         "WHERE persona_id = ? AND author = 'ai'", new["id"])
    assert ai == [(new_ids[0], new_ids[1])]
    assert _rows(data_dir, "SELECT last_processed_id FROM cortex_state WHERE persona_id = ?",
                 new["id"]) == [(new_ids[1],)]
    memory = client.get(f"/api/personas/{new['id']}/cortex/memory.md").get_json()
    assert memory["content"] == "Sam came by."


def test_an_archive_needs_the_memories_tick(client, source):
    response = client.get(f"/api/personas/{source['persona']['id']}/export?format=archive")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "include_memories"


def test_preview_of_an_archive_stores_nothing(client, source, snapshot):
    data = _archive(client, source["persona"]["id"])
    before = snapshot()
    preview = upload(client, data, "/api/personas/import?preview=1").get_json()
    assert preview["format"] == "archive" and preview["messages"] == 3
    assert preview["sessions"] == 2 and preview["name_clash"] is True
    assert snapshot() == before


def _tamper(data: bytes, name: str, change) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as old, zipfile.ZipFile(out, "w") as new:
        for info in old.infolist():
            content = old.read(info)
            new.writestr(info.filename, change(content) if info.filename == name else content)
    return out.getvalue()


def _remanifest(data: bytes, name: str, change) -> bytes:
    """Changes an entry and fixes its checksum, as a careful attacker would."""
    import hashlib
    changed = _tamper(data, name, change)
    with zipfile.ZipFile(io.BytesIO(changed)) as archive:
        digest = hashlib.sha256(archive.read(name)).hexdigest()

    def fix(raw: bytes) -> bytes:
        manifest = json.loads(raw)
        for entry in manifest["entries"]:
            if entry["path"] == name:
                entry["sha256"] = digest
        return json.dumps(manifest).encode()
    return _tamper(changed, "manifest.json", fix)


HOSTILE = {
    "tampered message": (lambda d: _tamper(d, "messages.json", lambda c: c.replace(
        b"I am Sam.", b"I am Bob.")), "checksum_mismatch"),
    "message of an unknown session": (lambda d: _remanifest(d, "messages.json", lambda c: c.replace(
        b'"session_id": "', b'"session_id": "x')), "bad_entry"),
    "revision of another file": (lambda d: _remanifest(d, "revisions.json", lambda c: c.replace(
        b'"soul.md"', b'"../soul.md"')), "bad_entry"),
    "lone surrogate": (lambda d: _remanifest(d, "messages.json", lambda c: c.replace(
        b"I am Sam.", b"\\ud800")), "bad_entry"),
    "number overflowing to infinity": (lambda d: _remanifest(
        d, "persona.json", lambda c: c.replace(b'"0.5"', b"1e400")), "bad_entry"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_archive_is_refused_and_nothing_written(client, source, snapshot, name):
    change, reason = HOSTILE[name]
    data = change(_archive(client, source["persona"]["id"]))
    before = snapshot()
    response = upload(client, data)
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"] == {**response.get_json()["error"],
                                            "code": "invalid_card", "reason": reason}
    assert snapshot() == before
