"""REST for cortex updates: start one on demand (202 + job) and follow the job."""
import json

import pytest

from tests.cortex.update_support import PID
from tests.fakes.claude import replies


def test_start_update_returns_202_and_the_job_can_be_followed(client, env, claude):
    env.persona()
    env.say(env.session(), "I love hiking.", "Me too!")
    response = client.post(f"/api/personas/{PID}/cortex/update", json={})
    assert response.status_code == 202
    body = response.get_json()
    assert (body["status"], body["created"]) == ("queued", True)
    assert response.headers["Location"] == f"/api/cortex/jobs/{body['job_id']}"

    again = client.post(f"/api/personas/{PID}/cortex/update", json={}).get_json()
    assert (again["job_id"], again["created"]) == (body["job_id"], False)

    job = client.get(f"/api/cortex/jobs/{body['job_id']}").get_json()
    assert {k: job[k] for k in ("id", "persona_id", "status", "files", "error")} == {
        "id": body["job_id"], "persona_id": PID, "status": "queued", "files": [], "error": None}

    claude.enqueue(replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                 "insert_text": "- Jonas loves hiking."})]),
                   replies.text("Noted hiking."))
    env.worker.run_pending()
    job = client.get(f"/api/cortex/jobs/{body['job_id']}").get_json()
    assert (job["status"], job["files"], job["summary"], job["trigger"]) == (
        "done", ["memory.md"], "Noted hiking.", "manual")
    history = client.get(f"/api/personas/{PID}/cortex/memory.md/history").get_json()
    assert history["revisions"][0]["summary"] == "Noted hiking."
    assert history["revisions"][0]["author"] == "ai"


def test_a_failed_job_reports_its_error_code(client, env, claude):
    env.persona()
    env.say(env.session(), "hello")
    job_id = client.post(f"/api/personas/{PID}/cortex/update", json={}).get_json()["job_id"]
    claude.enqueue(replies.rate_limited())
    env.worker.run_pending()
    job = client.get(f"/api/cortex/jobs/{job_id}").get_json()
    assert (job["status"], job["error"], job["retryable"]) == ("failed", "rate_limited", True)
    assert "sk-test" not in str(job)


def test_the_job_answer_is_the_stored_job_without_the_runner_fields(client, env, claude):
    """The §7 shape exactly, as `job_for_api` cut it from the row before jobs were models:
    the model adds no defaulted key and drops none, and the lease and owner stay out. The row
    is read here with SQL, not through the store (which answers with the model itself)."""
    env.persona()
    env.say(env.session(), "hello")
    job_id = client.post(f"/api/personas/{PID}/cortex/update", json={}).get_json()["job_id"]
    claude.enqueue(replies.rate_limited())
    env.worker.run_pending()
    answer = client.get(f"/api/cortex/jobs/{job_id}").get_data(as_text=True)
    shown = ("id", "persona_id", "status", "files", "error", "error_message", "retryable",
             "trigger", "reason", "proposal_id", "summary", "usage", "message_from",
             "message_to", "created_at", "started_at", "finished_at", "attempted")
    stored = dict(env.conn.execute(f"SELECT {', '.join(shown)}, owner, lease_until FROM "
                                   "cortex_jobs WHERE id = ?", (job_id,)).fetchone())
    assert stored["owner"] and stored["lease_until"], "the runner's fields are stored"
    stored.update(files=json.loads(stored["files"]), retryable=bool(stored["retryable"]),
                  usage=json.loads(stored["usage"] or "null"),
                  attempted=json.loads(stored["attempted"] or "[]"))
    assert json.loads(answer) == {key: stored[key] for key in shown}
    assert answer == json.dumps({key: stored[key] for key in sorted(shown)},
                                separators=(",", ":")) + "\n"


def test_default_persona_can_be_updated(client, env):
    assert client.post("/api/personas/default/cortex/update").status_code == 202


@pytest.mark.parametrize("pid", ["nobody0000", "..", "ANNA0001", "a" * 40, "%2e%2e"])
def test_unknown_or_invalid_persona_is_404(client, env, pid):
    response = client.post(f"/api/personas/{pid}/cortex/update", json={})
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "persona_not_found"


def test_disabled_cortex_is_409(client, env):
    env.persona()
    client.put("/api/cortex/settings", json={"enabled": False})
    response = client.post(f"/api/personas/{PID}/cortex/update", json={})
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "cortex_disabled"
    assert env.conn.execute("SELECT COUNT(*) FROM cortex_jobs").fetchone()[0] == 0


def test_a_form_post_is_refused(client, env):
    env.persona()
    response = client.post(f"/api/personas/{PID}/cortex/update", data={"x": "1"})
    assert response.status_code == 415
    assert env.conn.execute("SELECT COUNT(*) FROM cortex_jobs").fetchone()[0] == 0


@pytest.mark.parametrize("job_id", ["0" * 32, "nope", "../../etc"])
def test_unknown_job_is_404(client, env, job_id):
    response = client.get(f"/api/cortex/jobs/{job_id}")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] in ("job_not_found", "not_found")


def test_status_reports_progress_without_triggering(client, env):
    env.persona()
    env.settings("app", {"context_limit": 8})
    env.say(env.session(), "one", "two", "three")
    body = client.get(f"/api/personas/{PID}/cortex/status").get_json()
    assert (body["unprocessed"], body["threshold"], body["triggered"]) == (3, 6, False)
    assert body["progress"] == 0.5 and body["job_id"] is None and body["enabled"] is True
    assert env.conn.execute("SELECT COUNT(*) FROM cortex_jobs").fetchone()[0] == 0


@pytest.mark.parametrize("pid", ["nobody0000", "..", "a" * 40])
def test_status_of_unknown_persona_is_404(client, env, pid):
    response = client.get(f"/api/personas/{pid}/cortex/status")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "persona_not_found"
