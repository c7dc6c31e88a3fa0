"""Sleep: consolidation runs, their archive, the schedule, review mode and restore."""
import time

import pytest

from src.utils import provider
from tests.cortex.review_support import accept, proposal, review_on
from tests.cortex.update_support import PID, prompt_text, result_text, tool_results
from tests.fakes.claude import replies

BUDGET = 400
PIN = "<!-- pin -->\n- Jonas is allergic to peanuts.\n<!-- /pin -->"
LONG = ("# Memories\n\n## Facts\n" + PIN + "\n" +
        "".join(f"- On 2025-05-{d:02d} Jonas said he likes tea very much.\n" for d in range(1, 12))
        + "\n## Shared moments\n- Yesterday we talked about Bremen.\n")
SHORT = ("# Memories\n\n## Facts\n" + PIN + "\n- Jonas likes tea (said often in May 2025).\n\n"
         "## Shared moments\n- On 2025-05-11 we talked about Bremen.\n")


@pytest.fixture
def app_config(app_config):
    return {**app_config, "CORTEX_BUDGET": BUDGET}


@pytest.fixture
def sleep(app):
    return provider.get_sleep_schedule(app)


def _persona(env, text=LONG):
    env.persona()
    env.write("memory.md", text)


def _consolidate(env, sleep):
    job, _ = sleep.request(PID)
    finished = {j.id: j for j in env.worker.run_pending()}
    return finished[job.id]


def test_a_consolidation_rewrites_archives_and_summarises_in_one_group(env, sleep, claude, client):
    _persona(env)
    before = env.revisions(filename="memory.md")[-1]
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT})]),
                   replies.text("Merged the tea entries."))
    job = _consolidate(env, sleep)
    assert (job.status, job.reason, job.trigger, job.files) == (
        "done", "consolidate", "manual", ["memory.md"])
    request = claude.requests[0]
    assert 'name="memory.md"' in prompt_text(request) and 'over_budget="yes"' in prompt_text(request)
    assert 'pinned_lines="4-6"' in prompt_text(request) and request.messages[0]["content"]
    assert env.read("memory.md") == SHORT
    latest = env.revisions(filename="memory.md")[-1]
    assert latest["summary"] == f"consolidated: {len(LONG):,} → {len(SHORT):,} characters"
    assert (latest["author"], latest["job_id"]) == ("ai", job.id)
    (entry,) = client.get(f"/api/personas/{PID}/cortex/memory.md/archive").get_json()["entries"]
    assert "- On 2025-05-03 Jonas said he likes tea very much." in entry["text"]
    assert "Yesterday we talked about Bremen." in entry["text"] and PIN not in entry["text"]
    assert (entry["revision_before"], entry["revision_after"]) == (before["id"], latest["id"])
    found = client.get(f"/api/personas/{PID}/cortex/memory.md/archive?q=YESTERDAY").get_json()
    assert len(found["entries"]) == 1
    assert client.get(f"/api/personas/{PID}/cortex/memory.md/archive?q=coffee").get_json()[
        "entries"] == []
    status = client.get(f"/api/personas/{PID}/cortex/sleep").get_json()
    assert status["last_consolidation"]["id"] == job.id and status["due"] is None


@pytest.mark.parametrize("cortex_model, used", [(None, "persona-own-model"),
                                                 ("claude-haiku-5-5", "claude-haiku-5-5")])
def test_a_consolidation_runs_on_the_model_every_memory_run_uses(env, sleep, claude,
                                                                 cortex_model, used):
    """The cortex model setting, else the persona's own model, else the chat model: the rule of
    the updates (RunContext.model_for); consolidations once skipped the persona's model."""
    _persona(env)
    env.conn.execute("UPDATE personas SET model = 'persona-own-model' WHERE id = ?", (PID,))
    env.conn.commit()
    env.settings("app", {"model": "claude-opus-5-5",
                         **({"cortex_model": cortex_model} if cortex_model else {})})
    claude.enqueue(replies.text("Nothing to merge."))
    _consolidate(env, sleep)
    assert claude.requests[0].body["model"] == used


def test_a_consolidation_may_not_drop_pinned_text(env, sleep, claude):
    _persona(env)
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT.replace(PIN + "\n", "")})]),
                   replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT})]),
                   replies.text("Done."))
    job = _consolidate(env, sleep)
    (refusal,) = tool_results(claude.requests[1])
    assert refusal.get("is_error") and "lines 4-6" in result_text(refusal)
    assert job.status == "done" and PIN in env.read("memory.md")


def test_a_failed_consolidation_changes_and_archives_nothing(env, sleep, claude, client):
    _persona(env)
    revisions = env.revisions()
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT})]),
                   replies.rate_limited())
    job = _consolidate(env, sleep)
    assert (job.status, job.error) == ("failed", "rate_limited")
    assert env.read("memory.md") == LONG and env.revisions() == revisions
    assert client.get(f"/api/personas/{PID}/cortex/memory.md/archive").get_json()[
        "entries"] == []


def test_over_budget_is_due_until_consolidated_then_waits_for_new_text(env, sleep, claude):
    _persona(env)
    assert sleep.due(PID) == "budget"
    (job_id,) = sleep.scan()
    assert sleep.scan() == [], "a queued consolidation is not queued twice"
    claude.enqueue(replies.tool_use([("str_replace", {"filename": "memory.md",
                                                      "old_str": "Yesterday",
                                                      "new_str": "On 2025-05-11"})]),
                   replies.text("Dates fixed."))
    finished = env.worker.run_pending()
    assert [j.id for j in finished] == [job_id] and finished[0].trigger == "threshold"
    assert len(env.read("memory.md")) > BUDGET and sleep.due(PID) is None
    env.write("memory.md", env.read("memory.md") + "- New fact.\n")
    assert sleep.due(PID) == "budget"


def test_the_schedule_needs_n_sessions_and_h_hours(env, sleep, client):
    env.persona()
    client.put(f"/api/personas/{PID}/cortex/settings",
               json={"sleep_sessions": 3, "sleep_hours": 24})
    for _ in range(2):
        env.session()
    later = time.time() + 25 * 3600
    assert sleep.due(PID, now=later) is None
    env.session()
    assert sleep.due(PID, now=time.time() + 3600) is None
    assert sleep.due(PID, now=later) == "schedule"
    client.put(f"/api/personas/{PID}/cortex/settings", json={"sleep_enabled": False})
    assert sleep.due(PID, now=later) is None and sleep.scan(now=later) == []


def test_consolidate_now_queues_beside_a_regular_update(env, client):
    env.persona()
    env.say(env.session(), "hello")
    update = client.post(f"/api/personas/{PID}/cortex/update", json={}).get_json()
    response = client.post(f"/api/personas/{PID}/cortex/consolidate", json={})
    assert response.status_code == 202
    body = response.get_json()
    assert body["job"]["reason"] == "consolidate" and body["job_id"] != update["job_id"]
    again = client.post(f"/api/personas/{PID}/cortex/consolidate").get_json()
    assert (again["job_id"], again["created"]) == (body["job_id"], False)
    assert client.get(f"/api/cortex/jobs/{update['job_id']}").get_json()["reason"] == "manual"
    assert client.get(f"/api/personas/{PID}/cortex/sleep").get_json()["job_id"] == body["job_id"]


def test_in_review_mode_a_consolidation_is_a_proposal_archived_on_accept(env, sleep, claude,
                                                                         client):
    _persona(env)
    review_on(client)
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT})]),
                   replies.text("Merged."))
    job = _consolidate(env, sleep)
    assert env.read("memory.md") == LONG and job.proposal_id
    archive_url = f"/api/personas/{PID}/cortex/memory.md/archive"
    assert client.get(archive_url).get_json()["entries"] == []
    assert proposal(client, job.proposal_id)["kinds"] == ["consolidate"]
    assert accept(client, job.proposal_id).status_code == 200
    assert env.read("memory.md") == SHORT
    latest = env.revisions(filename="memory.md")[-1]
    assert latest["summary"].startswith(f"consolidated: {len(LONG):,} → {len(SHORT):,} characters")
    assert len(client.get(archive_url).get_json()["entries"]) == 1


def test_restore_from_the_archive_appends_as_a_restore_revision(env, sleep, claude, client):
    _persona(env)
    claude.enqueue(replies.tool_use([("write_file", {"filename": "memory.md",
                                                     "content": SHORT})]),
                   replies.text("Merged."))
    _consolidate(env, sleep)
    url = f"/api/personas/{PID}/cortex/memory.md/archive"
    (entry,) = client.get(url).get_json()["entries"]
    restore = f"{url}/{entry['id']}/restore"
    assert client.post(restore, json={"text": "not in it"}).status_code == 400
    assert client.post(f"{url}/999/restore", json={}).status_code == 404
    assert client.post(f"{url}/{2 ** 70}/restore", json={"text": ""}).status_code == 404
    assert client.post(restore, json={"text": "x"}, headers={"If-Match": '"1"'}).status_code == 400
    part = "- Yesterday we talked about Bremen."
    stale = client.post(restore, json={"text": part}, headers={"If-Match": '"1"'})
    assert stale.status_code == 412
    response = client.post(restore, json={"text": part})
    assert response.status_code == 200
    assert env.read("memory.md") == SHORT + part + "\n"
    latest = env.revisions(filename="memory.md")[-1]
    assert latest["author"] == "restore" and "archive" in latest["summary"]
    (entry,) = client.get(url).get_json()["entries"]
    assert entry["restored_revision"] == latest["id"]
