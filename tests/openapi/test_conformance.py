"""Real responses of every REST operation, success and error, conform to the Open API document.

Each request below is the kind the other suites send; each response is checked against the
document (status documented for the operation; content type and body valid).
"""
import pytest

from src.utils.openapi import build_document
from tests.fakes.claude import replies
from tests.openapi.support import Conformance
from tests.portability.support import ST_CHAT, upload

FILE = "/api/personas/{pid}/cortex/{filename}"


@pytest.fixture
def conform():
    return Conformance(build_document())


@pytest.fixture
def persona(client, conform):
    response = client.post("/api/personas", json={"name": "Ada", "language": "de"})
    return conform(response, "POST", "/api/personas").get_json()


@pytest.fixture
def session(client, conform, persona):
    response = client.post("/api/sessions", json={"persona_id": persona["id"]})
    return conform(response, "POST", "/api/sessions").get_json()


def _chat(client, conform, session, message="Hello"):
    response = client.post("/api/chat/stream",
                           json={"session_id": session["id"], "message": message})
    return conform(response, "POST", "/api/chat/stream").get_data(as_text=True)


def test_meta(client, conform):
    conform(client.get("/healthz"), "GET", "/healthz")
    conform(client.get("/api/openapi.json"), "GET", "/api/openapi.json")


def test_personas(client, conform, persona):
    path = "/api/personas/{pid}"
    conform(client.get("/api/personas"), "GET", "/api/personas")
    conform(client.post("/api/personas", json={"name": ""}), "POST", "/api/personas")
    conform(client.post("/api/personas", json={"name": "A", "x": 1}), "POST", "/api/personas")
    conform(client.post("/api/personas", data="name=A"), "POST", "/api/personas")
    conform(client.post("/api/personas", data="[1]", content_type="application/json"),
            "POST", "/api/personas")
    conform(client.get(f"/api/personas/{persona['id']}"), "GET", path)
    conform(client.get("/api/personas/nosuchpersona"), "GET", path)
    conform(client.put(f"/api/personas/{persona['id']}", json={"greeting": "Hallo"}), "PUT", path)
    conform(client.put(f"/api/personas/{persona['id']}", json={"language": "fr"}), "PUT", path)
    conform(client.delete("/api/personas/default"), "DELETE", path)
    conform(client.delete(f"/api/personas/{persona['id']}", data="x"), "DELETE", path)
    conform(client.delete(f"/api/personas/{persona['id']}"), "DELETE", path)
    conform(client.delete(f"/api/personas/{persona['id']}"), "DELETE", path)


def test_sessions(client, conform, persona, session):
    path = "/api/sessions/{sid}"
    conform(client.get("/api/sessions"), "GET", "/api/sessions")
    conform(client.get(f"/api/sessions?persona_id={persona['id']}"), "GET", "/api/sessions")
    conform(client.get("/api/sessions?persona_id=nobody123"), "GET", "/api/sessions")
    conform(client.post("/api/sessions", json={"persona_id": "nobody123"}), "POST",
            "/api/sessions")
    _chat(client, conform, session)
    conform(client.get(f"/api/sessions/{session['id']}?limit=1"), "GET", path)
    conform(client.get(f"/api/sessions/{session['id']}?limit=0"), "GET", path)
    conform(client.get("/api/sessions/0000000000000000"), "GET", path)
    conform(client.patch(f"/api/sessions/{session['id']}", json={"title": "Tea"}), "PATCH", path)
    conform(client.patch(f"/api/sessions/{session['id']}", json={"title": ""}), "PATCH", path)
    conform(client.delete(f"/api/sessions/{session['id']}"), "DELETE", path)


def test_chat_and_messages(client, conform, claude, session):
    last = "/api/sessions/{sid}/messages/last"
    regenerate = "/api/sessions/{sid}/regenerate"
    conform(client.post(f"/api/sessions/{session['id']}/regenerate", json={}), "POST", regenerate)
    conform(client.delete(f"/api/sessions/{session['id']}/messages/last"), "DELETE", last)
    conform(client.put(f"/api/sessions/{session['id']}/messages/last", json={"content": "x"}),
            "PUT", last)
    assert "event: done" in _chat(client, conform, session)
    failing = replies.stream_error("overloaded_error", "Overloaded", after_events=3)
    claude.default = replies.scripted(
        lambda body: failing if body["messages"][-1]["content"] == "Again" else "A reply.")
    assert "event: error" in _chat(client, conform, session, "Again")
    conform(client.post(f"/api/sessions/{session['id']}/regenerate", json={}), "POST", regenerate)
    conform(client.post(f"/api/sessions/{session['id']}/regenerate", data="x"), "POST",
            regenerate)
    conform(client.put(f"/api/sessions/{session['id']}/messages/last", json={"content": "Hi"}),
            "PUT", last)
    conform(client.put(f"/api/sessions/{session['id']}/messages/last", json={"content": ""}),
            "PUT", last)
    conform(client.delete(f"/api/sessions/{session['id']}/messages/last"), "DELETE", last)
    for body in ({"session_id": session["id"], "message": " "},
                 {"session_id": "0000000000000000", "message": "Hi"},
                 {"session_id": session["id"], "message": "x" * (1024 * 1024 + 1)}):
        conform(client.post("/api/chat/stream", json=body), "POST", "/api/chat/stream")
    conform(client.post("/api/chat/stream", data="message=hi"), "POST", "/api/chat/stream")


def test_cortex_files(client, conform, persona):
    url = f"/api/personas/{persona['id']}/cortex/memory.md"
    conform(client.get(f"/api/personas/{persona['id']}/cortex"), "GET",
            "/api/personas/{pid}/cortex")
    conform(client.get("/api/personas/nobody123/cortex"), "GET", "/api/personas/{pid}/cortex")
    first = conform(client.get(url), "GET", FILE)
    etag = first.headers["ETag"]
    conform(client.get(url, headers={"If-None-Match": etag}), "GET", FILE)
    conform(client.get(f"/api/personas/{persona['id']}/cortex/notes.md"), "GET", FILE)
    conform(client.put(url, json={"content": "x"}), "PUT", FILE)
    conform(client.put(url, json={"content": "x"}, headers={"If-Match": '"999999"'}), "PUT", FILE)
    conform(client.put(url, json={"content": "x" * 48001}, headers={"If-Match": "*"}), "PUT",
            FILE)
    conform(client.put(url, json={"text": "x"}, headers={"If-Match": etag}), "PUT", FILE)
    saved = conform(client.put(url, json={"content": "# Memory\n- tea\n"},
                               headers={"If-Match": etag}), "PUT", FILE).get_json()
    conform(client.post(url + "/reset", headers={"If-Match": etag}), "POST", FILE + "/reset")
    conform(client.post(url + "/reset"), "POST", FILE + "/reset")
    history = conform(client.get(url + "/history"), "GET", FILE + "/history").get_json()
    assert saved["revision"] in [rev["rev"] for rev in history["revisions"]]
    rev_path = FILE + "/history/{rev}"
    conform(client.get(f"{url}/history/{saved['revision']}"), "GET", rev_path)
    conform(client.get(f"{url}/history/999999"), "GET", rev_path)
    restore = rev_path + "/restore"
    conform(client.post(f"{url}/history/{saved['revision']}/restore"), "POST", restore)
    conform(client.post(f"{url}/history/{saved['revision']}/restore",
                        headers={"If-Match": '"1"'}), "POST", restore)
    conform(client.post(f"{url}/history/999999/restore"), "POST", restore)


def test_cortex_updates_and_settings(client, conform, persona):
    update, job = "/api/personas/{pid}/cortex/update", "/api/cortex/jobs/{job_id}"
    conform(client.get(f"/api/personas/{persona['id']}/cortex/status"), "GET",
            "/api/personas/{pid}/cortex/status")
    conform(client.get("/api/personas/nobody123/cortex/status"), "GET",
            "/api/personas/{pid}/cortex/status")
    queued = conform(client.post(f"/api/personas/{persona['id']}/cortex/update"), "POST", update)
    conform(client.get(queued.headers["Location"]), "GET", job)
    conform(client.get("/api/cortex/jobs/" + "0" * 32), "GET", job)
    conform(client.post("/api/personas/nobody123/cortex/update", json={}), "POST", update)
    conform(client.get("/api/cortex/settings"), "GET", "/api/cortex/settings")
    conform(client.put("/api/cortex/settings", json={"frequency": "often"}), "PUT",
            "/api/cortex/settings")
    conform(client.put("/api/cortex/settings", json={"enabled": False}), "PUT",
            "/api/cortex/settings")
    conform(client.post(f"/api/personas/{persona['id']}/cortex/update"), "POST", update)


def test_settings_and_key(client, conform, claude):
    key = "/api/settings/api-key"
    # Keys are random-looking: every key seen is masked (8+ character runs) for the rest of the
    # process, so a key spelling "overload" would redact that word in later tests' output.
    conform(client.get("/api/settings"), "GET", "/api/settings")
    conform(client.put("/api/settings", json={"max_tokens": 0}), "PUT", "/api/settings")
    conform(client.put("/api/settings", json={"effort": "high", "context_limit": 20}), "PUT",
            "/api/settings")
    conform(client.put(key, json={"api_key": "short"}), "PUT", key)
    claude.enqueue(replies.http_error(401, "authentication_error", "invalid x-api-key"))
    conform(client.put(key, json={"api_key": "sk-ant-Rj7qW2xZ9vK4mT8pL3nB"}), "PUT", key)
    claude.enqueue(replies.http_error(529, "overloaded_error", "Overloaded"))
    conform(client.put(key, json={"api_key": "sk-ant-Ov5tY8cQ1wE6rU9iP2aS"}), "PUT", key)
    conform(client.put(key, json={"api_key": "sk-ant-Ac3dF6gH9jK2lZ5xC8vB"}), "PUT", key)
    conform(client.delete(key), "DELETE", key)


def test_chat_import(client, conform, persona):
    path = "/api/personas/{pid}/chats/import"
    url = f"/api/personas/{persona['id']}/chats/import"
    conform(upload(client, ST_CHAT, url + "?preview=1", filename="chat.jsonl"), "POST", path)
    created = conform(upload(client, ST_CHAT, url, filename="chat.jsonl"), "POST", path)
    conform(upload(client, b"no json", url, filename="chat.jsonl"), "POST", path)
    conform(upload(client, ST_CHAT, "/api/personas/nobody123/chats/import"), "POST", path)
    conform(client.post(url, json={}), "POST", path)
    exported = client.get(f"/api/sessions/{created.get_json()['id']}/export?format=json")
    conform(exported, "GET", "/api/sessions/{sid}/export")
