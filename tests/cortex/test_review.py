"""Review mode: a finished update becomes a proposal; accept, edit-then-accept, reject, stale."""
import pytest

from src.utils.models.cortex import CortexJob
from tests.cortex.review_support import (
    MEMORY,
    accept,
    insert_reply,
    proposal,
    proposals,
    reject,
    replace_reply,
    review_on,
)
from tests.cortex.update_support import PID, prompt_text


@pytest.fixture
def reviewed(client, env):
    """A persona in review mode with a known memory.md and one unprocessed exchange."""
    env.persona()
    env.write("memory.md", MEMORY)
    review_on(client)
    env.say(env.session(), "I adopted a cat called Miso.", "How lovely!")
    return env


def _propose(env, claude, *items) -> CortexJob:
    claude.enqueue(*items)
    return env.run_job()


def test_an_update_in_review_mode_proposes_and_changes_no_file(client, reviewed, claude):
    env = reviewed
    before = env.revisions()
    job = _propose(env, claude, *insert_reply("- Jonas has a cat, Miso.", 4, summary="Cat."))
    assert (job.status, job.files, job.reason) == ("done", [], "manual")
    assert job.proposal_id
    assert env.read("memory.md") == MEMORY and env.revisions() == before
    assert env.processed() == env.conn.execute("SELECT MAX(id) FROM messages").fetchone()[0]

    listed = proposals(client)
    assert listed["pending"] == 1 and listed["proposals"][0]["id"] == job.proposal_id
    detail = proposal(client, job.proposal_id)
    (file,) = detail["files"]
    assert (detail["status"], detail["summary"], detail["stale"]) == ("pending", "Cat.", False)
    assert (file["filename"], file["status"], file["base_revision"]) == (
        "memory.md", "pending", before[-1]["id"] if before[-1]["filename"] == "memory.md"
        else file["base_revision"])
    assert "+- Jonas has a cat, Miso." in file["diff"]
    assert file["content"] == MEMORY.replace("Bremen.\n", "Bremen.\n- Jonas has a cat, Miso.\n")
    assert (detail["message_from"], detail["message_to"]) == (job.message_from,
                                                              job.message_to)


def test_accepting_applies_the_edits_as_reviewed_ai_revisions(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *insert_reply("- Jonas has a cat, Miso.", 4, summary="Cat."))
    response = accept(client, job.proposal_id)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["status"] == "accepted"
    assert "- Jonas has a cat, Miso.\n" in env.read("memory.md")
    latest = client.get(f"/api/personas/{PID}/cortex/memory.md/history").get_json()["revisions"][0]
    assert (latest["author"], latest["job_id"]) == ("ai", job.id)
    assert latest["reviewed"] == {"reviewer": "user", "decision": "accepted",
                                  "proposal_id": job.proposal_id}
    assert "accepted by the person" in latest["summary"]
    again = accept(client, job.proposal_id)
    assert (again.status_code, again.get_json()["error"]["code"]) == (409, "proposal_decided")
    assert proposals(client)["pending"] == 0


def test_edit_then_accept_stores_the_persons_text_and_checks_if_match(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *insert_reply("- Jonas has a cat, Miso.", 4))
    current = env.cortex.read_file_info(PID, "memory.md").revision
    edited = MEMORY + "- Jonas has a ginger cat called Miso.\n"
    stale = accept(client, job.proposal_id, body={"filename": "memory.md",
                                                     "content": edited}, if_match=current - 1)
    assert (stale.status_code, stale.get_json()["error"]["code"]) == (412, "revision_conflict")
    assert env.read("memory.md") == MEMORY
    response = accept(client, job.proposal_id, body={"filename": "memory.md",
                                                        "content": edited}, if_match=current)
    assert response.status_code == 200, response.get_json()
    assert env.read("memory.md") == edited
    latest = env.cortex.history(PID, "memory.md")[0]
    assert latest.reviewed is not None and latest.reviewed.decision == "edited" and latest.author == "ai"


def test_rejecting_keeps_the_files_and_the_messages_stay_processed(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *insert_reply("- Jonas has a cat, Miso.", 4))
    revisions = env.revisions()
    response = reject(client, job.proposal_id)
    assert response.status_code == 200 and response.get_json()["status"] == "rejected"
    assert env.read("memory.md") == MEMORY and env.revisions() == revisions
    assert env.trigger.status(PID)["unprocessed"] == 0
    assert accept(client, job.proposal_id).status_code == 409


def test_a_stale_proposal_is_replayed_on_the_persons_text(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *replace_reply("## Shared moments\n",
                                               "## Shared moments\n- We talked about Miso.\n"))
    persons = MEMORY.replace("Bremen.", "Bremen since 2019.")
    env.write("memory.md", persons)
    detail = proposal(client, job.proposal_id)
    (file,) = detail["files"]
    assert (detail["stale"], file["stale"], file["conflict"]) == (True, True, False)
    assert file["rebased"] == persons + "- We talked about Miso.\n"
    assert accept(client, job.proposal_id).status_code == 200
    assert env.read("memory.md") == persons + "- We talked about Miso.\n"


def test_a_stale_proposal_that_no_longer_applies_shows_a_conflict(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *replace_reply("- Jonas lives in Bremen.",
                                               "- Jonas lives in Bremen with his cat Miso."))
    persons = MEMORY.replace("- Jonas lives in Bremen.", "- Jonas moved to Hamburg.")
    rev = env.write("memory.md", persons)
    (file,) = proposal(client, job.proposal_id)["files"]
    assert (file["stale"], file["conflict"], file["current_content"]) == (True, True, persons)
    response = accept(client, job.proposal_id)
    body = response.get_json()["error"]
    assert (response.status_code, body["code"]) == (409, "proposal_conflict")
    assert body["files"][0]["current_revision"] == rev and body["files"][0]["conflict"]
    assert env.read("memory.md") == persons
    merged = persons.replace("Hamburg.", "Hamburg with his cat Miso.")
    blind = accept(client, job.proposal_id, body={"filename": "memory.md", "content": merged})
    assert blind.status_code == 409 and env.read("memory.md") == persons
    ok = accept(client, job.proposal_id, body={"filename": "memory.md", "content": merged},
                if_match=rev)
    assert ok.status_code == 200 and env.read("memory.md") == merged


def test_a_new_update_builds_on_the_pending_proposal(client, reviewed, claude):
    env = reviewed
    first = _propose(env, claude, *insert_reply("- Jonas has a cat, Miso.", 4, summary="Cat."))
    env.say(env.session(), "Miso is 3 years old.", "Noted!")
    second = _propose(env, claude, *replace_reply("- Jonas has a cat, Miso.",
                                                  "- Jonas has a cat, Miso (3 years old).",
                                                  summary="Age."))
    assert "- Jonas has a cat, Miso." in prompt_text(claude.requests[-2])
    assert second.proposal_id == first.proposal_id
    listed = proposals(client)
    assert listed["pending"] == 1 and len(listed["proposals"]) == 1
    detail = proposal(client, first.proposal_id)
    assert detail["job_ids"] == [first.id, second.id]
    assert detail["summary"] == "Cat.\nAge."
    assert detail["files"][0]["content"].count("Miso") == 1
    assert env.read("memory.md") == MEMORY
    assert accept(client, first.proposal_id).status_code == 200
    assert "- Jonas has a cat, Miso (3 years old).\n" in env.read("memory.md")


def test_files_of_one_proposal_are_decided_one_by_one(client, reviewed, claude):
    env = reviewed
    from tests.fakes.claude import replies
    claude.enqueue(replies.tool_use([
        ("insert", {"filename": "memory.md", "insert_line": 4, "insert_text": "- Cat: Miso."}),
        ("insert", {"filename": "soul.md", "insert_line": 0, "insert_text": "I like cats."})]),
        replies.text("Two files."))
    job = env.run_job()
    soul = env.read("soul.md")
    assert reject(client, job.proposal_id, body={"filename": "soul.md"}).status_code == 200
    assert proposal(client, job.proposal_id)["status"] == "pending"
    assert accept(client, job.proposal_id, body={"filename": "memory.md"}).status_code == 200
    detail = proposal(client, job.proposal_id)
    assert detail["status"] == "accepted"
    assert [f["status"] for f in detail["files"]] == ["accepted", "rejected"]
    assert env.read("soul.md") == soul and "- Cat: Miso.\n" in env.read("memory.md")


def test_auto_mode_still_applies_directly(client, env, claude):
    env.persona()
    env.say(env.session(), "I adopted a cat.", "Nice!")
    claude.enqueue(*insert_reply("- Jonas has a cat."))
    job = env.run_job()
    assert job.files == ["memory.md"] and job.proposal_id is None
    assert proposals(client)["pending"] == 0


@pytest.mark.parametrize("body,code", [
    ({"memory_review": "sometimes"}, "invalid_setting"),
    ({"memory_review": None}, "invalid_setting"),
    ({"sleep_sessions": 0}, "invalid_setting"),
    ({"sleep_hours": True}, "invalid_setting"),
    ({"nope": 1}, "invalid_setting"),
])
def test_bad_memory_settings_are_400_and_store_nothing(client, env, body, code):
    env.persona()
    response = client.put(f"/api/personas/{PID}/cortex/settings", json=body)
    assert (response.status_code, response.get_json()["error"]["code"]) == (400, code)
    assert client.get(f"/api/personas/{PID}/cortex/settings").get_json()["memory_review"] == "auto"


@pytest.mark.parametrize("path", ["proposals/" + "0" * 32, "proposals/..%2f..", "proposals/XYZ"])
def test_unknown_proposals_are_404(client, env, path):
    env.persona()
    response = client.get(f"/api/personas/{PID}/cortex/{path}")
    assert response.status_code == 404
    post = client.post(f"/api/personas/{PID}/cortex/{path}/accept", json={})
    assert post.status_code == 404


def test_hostile_accept_bodies_are_4xx_and_write_nothing(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *insert_reply("- Cat.", 4))
    before = env.revisions()
    cases = [({"filename": "memory.md", "content": "\ud800"}, 400),
             ({"filename": "memory.md", "content": 5}, 400),
             ({"filename": "../x", "content": "a"}, 400),
             ({"filename": "memory.md", "content": "x" * 60_000}, 413)]
    for body, status in cases:
        assert accept(client, job.proposal_id, body=body).status_code == status, body
    other = client.post(f"/api/personas/default/cortex/proposals/{job.proposal_id}/accept",
                        json={})
    assert other.status_code == 404
    assert env.revisions() == before and proposal(client, job.proposal_id)["status"] == "pending"


def test_if_match_on_a_plain_accept_guards_the_reviewed_revision(client, reviewed, claude):
    env = reviewed
    job = _propose(env, claude, *insert_reply("- Cat.", 4))
    rev = env.cortex.read_file_info(PID, "memory.md").revision
    env.write("memory.md", MEMORY + "- Person's line.\n")
    stale = accept(client, job.proposal_id, if_match=rev)
    assert (stale.status_code, stale.get_json()["error"]["code"]) == (412, "revision_conflict")
    assert env.read("memory.md") == MEMORY + "- Person's line.\n"
    blind = accept(client, job.proposal_id, body={"content": "x"})
    assert (blind.status_code, blind.get_json()["error"]["code"]) == (409, "proposal_conflict")
    assert accept(client, job.proposal_id).status_code == 200
    assert env.read("memory.md") == MEMORY.replace("Bremen.\n", "Bremen.\n- Cat.\n") + \
        "- Person's line.\n"


def test_the_proposal_answers_keep_their_keys(client, reviewed, claude):
    """Proposals are models now (docs/development.md, "Typed resources"): the answers keep the
    keys the stored rows gave, the model adds no defaulted key and keeps the extra `sources`."""
    job = _propose(reviewed, claude, *insert_reply("- Jonas has a cat, Miso.", 4))
    columns = {"id", "persona_id", "status", "job_ids", "kinds", "summary", "message_from",
               "message_to", "created_at", "updated_at", "decided_at", "sources", "files"}
    (listed,) = proposals(client)["proposals"]
    assert set(listed) == columns
    assert set(listed["files"][0]) == {"filename", "status", "base_revision", "revision"}
    detail = proposal(client, job.proposal_id)
    assert set(detail) == columns | {"stale"}
    assert set(detail["files"][0]) == {
        "filename", "status", "base_revision", "content", "revision", "review", "decided_at",
        "current_revision", "chars", "base_chars", "diff", "stale", "conflict", "rebased",
        "current_content"}
    history = client.get(f"/api/personas/{PID}/cortex/memory.md/history").get_json()
    assert set(history["revisions"][0]) == {
        "rev", "author", "created_at", "summary", "sha256", "chars", "job_id", "message_from",
        "message_to", "reviewed", "source", "reverts"}
