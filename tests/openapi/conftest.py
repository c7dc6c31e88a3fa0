"""Fixtures for the Open API tests: the app talks to the Claude fake, with seeded data."""
import pytest

from tests.fakes.claude import replies

API_KEY = "sk-ant-openapi-test-0123456789abcdef"


@pytest.fixture
def app_config(app_config, claude):
    """The test app pointed at the fake (every request gets a short text reply)."""
    claude.default = replies.text("A short reply.", chunks=["A short ", "reply."])
    return {**app_config, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": claude.url}


@pytest.fixture
def seeded(client):
    """Ids that exist: a persona with a session holding one exchange, a queued cortex update
    job, and every (persona, file, revision) of that persona and the default one."""
    persona = client.post("/api/personas", json={"name": "Fuzz"}).get_json()
    session = client.post("/api/sessions", json={"persona_id": persona["id"]}).get_json()
    reply = client.post("/api/chat/stream", json={"session_id": session["id"], "message": "Hi"})
    assert b"event: done" in reply.get_data(), reply.get_data()
    job = client.post(f"/api/personas/{persona['id']}/cortex/update").get_json()
    ids = {"persona_ids": [persona["id"], "default"], "session_ids": [session["id"]],
           "job_ids": [job["job_id"]]}
    mid = client.get(f"/api/sessions/{session['id']}").get_json()["messages"][0]["id"]
    paths = []
    for pid in ids["persona_ids"]:
        for name in ("memory.md", "soul.md", "relationship.md"):
            history = client.get(f"/api/personas/{pid}/cortex/{name}/history").get_json()
            paths += [{"pid": pid, "filename": name, "rev": rev["rev"], "sid": session["id"],
                       "mid": mid, "job_id": job["job_id"]} for rev in history["revisions"]]
    return {"ids": ids, "path_parameters": paths}
