"""Learning from an imported history (issue 24, docs/chat-import.md#learning-from-it): a
SillyTavern chat with swipes imports as branches; "learn from it" reads the active branch in
windows through the regular update request against the Claude fake, staged across windows and
applied once at the end; cancel or a lost job mid-way changes nothing; review mode turns the run
into a proposal; pins hold; the learned revisions are anchored to the imported messages, so
deleting them retracts what was learned like any other message."""
import threading

import pytest

from src.utils.openapi import build_document
from src.utils.services import learn_cost
from src.utils.storage import cortex_jobs as jobs
from tests.cortex.learn_support import cortex_state, first_rounds, import_chat, window_replies
from tests.cortex.review_support import review_on
from tests.cortex.update_support import prompt_text, result_text, tool_results
from tests.fakes.claude import replies
from tests.openapi.support import Conformance

PINNED = "<!-- pin -->\n- Robin is allergic to moonflowers.\n<!-- /pin -->\n"


@pytest.fixture
def pid(client, env) -> str:
    response = client.post("/api/personas", json={"name": "Seraphina"})
    assert response.status_code == 201, response.get_json()
    persona_id = response.get_json()["id"]
    env.cortex.read_all_info(persona_id)  # the files exist before anything is compared
    return persona_id


@pytest.fixture
def chat(client, pid) -> dict:
    return import_chat(client, pid)


def _branch(env, sid: str) -> list[dict]:
    return [dict(r) for r in env.conn.execute(
        "SELECT id, content, on_branch FROM messages WHERE session_id = ? ORDER BY id", (sid,))]


def _start(client, sid: str, **body):
    return client.post(f"/api/sessions/{sid}/learn", json=body)


def _learn(client, sid: str) -> dict:
    return client.get(f"/api/sessions/{sid}/learn").get_json()["run"]


def test_the_estimate_counts_windows_tokens_and_cost_before_anything_runs(client, env, pid,
                                                                          chat, claude):
    before = cortex_state(env, pid)
    response = client.get(f"/api/sessions/{chat['id']}/learn/estimate?window_messages=2")
    assert response.status_code == 200, response.get_json()
    estimate = response.get_json()
    assert (estimate["windows"], estimate["messages"], estimate["window_messages"]) == (3, 5, 2)
    assert estimate["input_tokens"] > 3 * 2 * 500, "three windows of two rounds of the prompt"
    assert estimate["output_tokens"] == 3 * learn_cost.OUTPUT_PER_WINDOW
    assert estimate["output_tokens_max"] == 3 * 2 * 4096
    cost = estimate["cost"]
    assert cost["known"] and cost["provider"] == "anthropic" and cost["currency"] == "USD"
    assert cost["usd"] == round((estimate["input_tokens"] * 3 + estimate["output_tokens"] * 15)
                                / 1_000_000, 4), "the default model is a Sonnet"
    default = client.get(f"/api/sessions/{chat['id']}/learn/estimate").get_json()
    assert default["window_messages"] == 30 and default["windows"] == 1, \
        "the default window is the update threshold (75 % of 40 messages)"
    assert claude.requests == [] and cortex_state(env, pid) == before
    assert _learn(client, chat["id"]) is None


def test_prices_are_known_for_claude_families_and_unknown_elsewhere():
    assert learn_cost.price_of("anthropic", "claude-sonnet-4-5") == (3.0, 15.0)
    assert learn_cost.price_of("anthropic", "claude-opus-4-1-20250805") == (15.0, 75.0)
    assert learn_cost.price_of("anthropic", "claude-haiku-4-5") == (1.0, 5.0)
    assert learn_cost.price_of("anthropic", "my-proxy-model") is None
    assert learn_cost.price_of("openai_compatible", "claude-sonnet-4-5") is None
    estimate = learn_cost.estimate([100, 50], 1000, "openai_compatible", "llama3", 4096)
    assert estimate["cost"]["usd"] is None and not estimate["cost"]["known"]
    assert estimate["input_tokens"] == (1100 + 1050) * learn_cost.ROUNDS


def test_learning_runs_one_update_per_window_and_applies_them_together(client, env, pid, chat,
                                                                       claude):
    rows = _branch(env, chat["id"])
    active = [r for r in rows if r["on_branch"]]
    assert len(rows) == 7 and len(active) == 5, "the swipes imported as sibling branches"
    claude.enqueue(*window_replies("- Robin woke in my glade, head aching."),
                   *window_replies("- I gave Robin a potion.", filename="soul.md"),
                   *window_replies("- Robin asked about the wards."))
    memory_before = env.read("memory.md", pid)
    response = _start(client, chat["id"], window_messages=2)
    assert response.status_code == 202, response.get_json()
    run = response.get_json()
    assert (run["status"], run["windows"], run["windows_done"]) == ("queued", 3, 0)
    assert response.headers["Location"] == f"/api/sessions/{chat['id']}/learn"

    env.worker.run_pending()

    run = _learn(client, chat["id"])
    assert (run["status"], run["windows_done"], run["windows"]) == ("done", 3, 3), run
    assert run["files"] == ["memory.md", "soul.md"] and not run["cancelled"]
    opened = first_rounds(claude.requests)
    assert len(opened) == 3 and len(claude.requests) == 6
    windows = [[m["id"] for m in active[:2]], [m["id"] for m in active[2:4]], [active[4]["id"]]]
    texts = {r["id"]: r["content"] for r in rows}
    for request, window in zip(opened, windows, strict=True):
        prompt = prompt_text(request)
        for message_id in (m["id"] for m in rows):
            assert (texts[message_id] in prompt) == (message_id in window), (message_id, window)
    assert "Robin woke in my glade" in prompt_text(opened[1]), \
        "window 2 sees what window 1 learned (one staged copy across windows)"
    assert env.read("memory.md", pid) == \
        "- Robin asked about the wards.\n- Robin woke in my glade, head aching.\n" + memory_before
    assert env.read("soul.md", pid).startswith("- I gave Robin a potion.\n")
    learned = [r for r in env.revisions(pid) if r["job_id"] == run["job_id"]]
    assert [(r["filename"], r["author"]) for r in learned] == [("memory.md", "ai"),
                                                               ("soul.md", "ai")]
    assert {r["summary"] for r in learned} == {  # each window_replies call counts from 1
        "Learned from an imported history: Window 1. Window 1. Window 1."}
    assert env.processed(pid) == 0, "learning never moves the regular update's processed mark"
    memory = client.get(f"/api/personas/{pid}/cortex/memory.md/history").get_json()
    assert memory["revisions"][0]["source"]["message_ids"] == windows[0] + windows[2]
    soul = client.get(f"/api/personas/{pid}/cortex/soul.md/history").get_json()
    assert soul["revisions"][0]["source"]["message_ids"] == windows[1]
    shown = client.get(f"/api/sessions/{chat['id']}/messages/{active[2]['id']}").get_json()
    assert [(m["filename"], m["kind"]) for m in shown["memory"]] == [("soul.md", "derived")]


def _run_in_thread(env) -> threading.Thread:
    thread = threading.Thread(target=env.worker.run_pending, name="test-worker")
    thread.start()
    return thread


def test_cancel_mid_way_changes_nothing(client, env, pid, chat, claude):
    before = cortex_state(env, pid)
    gate = threading.Event()
    first, second = window_replies("- Robin woke in my glade.", "- I gave Robin a potion.")[::2], \
        window_replies("- Robin woke in my glade.", "- I gave Robin a potion.")[1::2]
    claude.enqueue(first[0], second[0], replies.gated(first[1], gate), second[1])
    assert _start(client, chat["id"], window_messages=2).status_code == 202
    worker = _run_in_thread(env)
    try:
        claude.wait_for_requests(3)  # window 2's first round is held by the fake
        run = _learn(client, chat["id"])
        assert (run["status"], run["windows_done"]) == ("running", 1)
        response = client.post(f"/api/sessions/{chat['id']}/learn/cancel")
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["cancel_requested"] is True
    finally:
        gate.set()
        worker.join(10)
    assert not worker.is_alive()
    run = _learn(client, chat["id"])
    assert (run["status"], run["error"], run["cancelled"]) == ("failed", "cancelled", True)
    assert run["windows_done"] == 2 and len(claude.requests) == 4, "window 3 never ran"
    assert cortex_state(env, pid) == before
    again = client.post(f"/api/sessions/{chat['id']}/learn/cancel")
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "learn_not_running"


def test_a_run_that_loses_its_job_mid_way_applies_nothing(client, env, pid, chat, claude):
    before = cortex_state(env, pid)
    gate = threading.Event()
    scripted = window_replies("- one", "- two", "- three")
    scripted[0] = replies.gated(scripted[0], gate)
    claude.enqueue(*scripted)
    assert _start(client, chat["id"], window_messages=2).status_code == 202
    worker = _run_in_thread(env)
    try:
        claude.wait_for_requests(1)
        assert jobs.fail_interrupted(env.conn, lambda owner: False) == 1, \
            "the recovery pass finds the job's owner gone (as after a SIGKILL)"
    finally:
        gate.set()
        worker.join(10)
    run = _learn(client, chat["id"])
    assert (run["status"], run["error"]) == ("failed", "interrupted")
    assert cortex_state(env, pid) == before


def test_review_mode_turns_the_run_into_one_proposal(client, env, pid, chat, claude):
    review_on(client, pid)
    before = cortex_state(env, pid)
    claude.enqueue(*window_replies("- Robin woke in my glade.", "- Robin asked about light."))
    assert _start(client, chat["id"], window_messages=3).status_code == 202
    env.worker.run_pending()
    run = _learn(client, chat["id"])
    assert run["status"] == "done" and run["proposal_id"] and run["files"] == []
    assert cortex_state(env, pid)["files"] == before["files"]
    assert env.revisions(pid) == [r for r in env.revisions(pid) if r["author"] != "ai"]
    proposal = client.get(f"/api/personas/{pid}/cortex/proposals/{run['proposal_id']}").get_json()
    assert proposal["status"] == "pending" and proposal["job_ids"] == [run["job_id"]]
    [memory] = proposal["files"]
    assert memory["content"].startswith("- Robin asked about light.\n- Robin woke in my glade.\n")
    accepted = client.post(f"/api/personas/{pid}/cortex/proposals/{run['proposal_id']}/accept")
    assert accepted.status_code == 200, accepted.get_json()
    assert env.read("memory.md", pid) == memory["content"]
    assert env.processed(pid) == 0
    history = client.get(f"/api/personas/{pid}/cortex/memory.md/history").get_json()
    assert len(history["revisions"][0]["source"]["message_ids"]) == 5


def test_pinned_text_survives_a_learn_run(client, env, pid, chat, claude):
    env.write("memory.md", "# Memories\n" + PINNED, pid)
    claude.enqueue(
        replies.tool_use([("str_replace", {"filename": "memory.md",
                                           "old_str": "- Robin is allergic to moonflowers.",
                                           "new_str": "- Robin likes moonflowers."})]),
        *window_replies("- Robin woke in my glade."))
    assert _start(client, chat["id"], window_messages=200).status_code == 202
    env.worker.run_pending()
    assert _learn(client, chat["id"])["status"] == "done"
    [refused] = tool_results(claude.requests[1])
    assert refused["is_error"] and "pinned" in result_text(refused)
    assert env.read("memory.md", pid) == "- Robin woke in my glade.\n# Memories\n" + PINNED


def test_deleting_the_imported_messages_retracts_what_was_learned(client, env, pid, chat,
                                                                  claude):
    memory_before = env.read("memory.md", pid)
    claude.enqueue(*window_replies("- Robin woke in my glade.", "- Robin asked about wards."))
    assert _start(client, chat["id"], window_messages=3).status_code == 202
    env.worker.run_pending()
    assert env.read("memory.md", pid) != memory_before
    calls = len(claude.requests)

    assert client.delete(f"/api/sessions/{chat['id']}").status_code in (200, 204)
    [job] = env.worker.run_pending()

    assert (job.reason, job.status) == ("reconcile", "done"), job
    assert len(claude.requests) == calls, "every source is gone: a direct revert, no model call"
    assert env.read("memory.md", pid) == memory_before
    top = env.revisions(pid, "memory.md")[-1]
    assert top["summary"].startswith("reverted: message deleted")


def test_deleting_one_learned_message_reconciles_through_the_model(client, env, pid, chat,
                                                                   claude):
    claude.enqueue(*window_replies("- Robin woke in my glade.", "- The wards keep Robin safe."))
    assert _start(client, chat["id"], window_messages=3).status_code == 202
    env.worker.run_pending()
    calls = len(claude.requests)
    assert client.delete(f"/api/sessions/{chat['id']}/messages/last").status_code in (200, 204)
    claude.enqueue(replies.tool_use([("str_replace", {
        "filename": "memory.md", "old_str": "- The wards keep Robin safe.\n", "new_str": ""})]),
        replies.text("Forgot the wards."))
    [job] = env.worker.run_pending()
    assert (job.reason, job.status) == ("reconcile", "done"), job
    assert "The glade's wards" in prompt_text(claude.requests[calls])
    assert "The wards keep Robin safe" not in env.read("memory.md", pid)
    assert "Robin woke in my glade" in env.read("memory.md", pid)


def test_a_second_run_while_one_is_queued_is_a_conflict_and_a_queued_one_cancels_at_once(
        client, env, pid, chat, claude):
    assert _start(client, chat["id"]).status_code == 202
    other = import_chat(client, pid)
    response = _start(client, other["id"])
    assert response.status_code == 409 and response.get_json()["error"]["code"] == \
        "learn_in_progress"
    cancelled = client.post(f"/api/sessions/{chat['id']}/learn/cancel", json={})
    assert cancelled.status_code == 200
    assert (cancelled.get_json()["status"], cancelled.get_json()["cancelled"]) == ("failed", True)
    assert env.worker.run_pending() == [] and claude.requests == []
    assert _start(client, other["id"]).status_code == 202
    job, created = env.trigger.request_update(pid)
    assert created and job.reason == "manual", \
        "a regular update queues beside a queued learn run instead of joining it"
    assert _learn(client, other["id"])["status"] == "queued"


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"window_messages": 1}, 400, "validation_error"),
    ({"window_messages": 201}, 400, "validation_error"),
    ({"window_messages": "2"}, 400, "validation_error"),
    ({"window_messages": True}, 400, "validation_error"),
    ({"window": 2}, 400, "unknown_field"),
])
def test_bad_start_bodies_are_refused_and_change_nothing(client, env, pid, chat, body, status,
                                                         code):
    before = cortex_state(env, pid)
    response = _start(client, chat["id"], **body)
    assert response.status_code == status and response.get_json()["error"]["code"] == code
    assert _learn(client, chat["id"]) is None and cortex_state(env, pid) == before


def test_sessions_that_cannot_be_learned_from_are_refused(client, env, pid, chat):
    plain = client.post("/api/sessions", json={"persona_id": pid}).get_json()["id"]
    cases = [
        ("post", "/api/sessions/0123456789abcdef/learn", 404, "session_not_found"),
        ("get", "/api/sessions/0123456789abcdef/learn/estimate", 404, "session_not_found"),
        ("get", "/api/sessions/..%2Fetc/learn", 404, None),
        ("post", f"/api/sessions/{plain}/learn", 409, "not_imported"),
        ("get", f"/api/sessions/{plain}/learn", 409, "not_imported"),
        ("post", f"/api/sessions/{chat['id']}/learn/cancel", 409, "learn_not_running"),
        ("get", f"/api/sessions/{chat['id']}/learn/estimate?window_messages=x", 400,
         "validation_error"),
        ("get", f"/api/sessions/{chat['id']}/learn/estimate?window_messages=1", 400,
         "validation_error"),
    ]
    for method, url, status, code in cases:
        response = getattr(client, method)(url)
        assert response.status_code == status, (url, response.get_json())
        if code:
            assert response.get_json()["error"]["code"] == code, url
    text = client.post(f"/api/sessions/{chat['id']}/learn", data="x", content_type="text/plain")
    assert text.status_code == 415
    client.put("/api/cortex/settings", json={"enabled": False})
    disabled = _start(client, chat["id"])
    assert disabled.status_code == 409 and disabled.get_json()["error"]["code"] == \
        "cortex_disabled"


def test_a_learn_run_does_not_hide_or_hold_back_the_regular_updates(client, env, pid):
    plain = client.post("/api/sessions", json={"persona_id": pid}).get_json()["id"]
    said = env.say(plain, "I moved to Bremen.", "How exciting!", "The flat is small.")
    later = import_chat(client, pid)  # imported after the chat: higher ids
    assert _start(client, later["id"]).status_code == 202
    assert client.post(f"/api/sessions/{later['id']}/learn/cancel").status_code == 200
    status = env.trigger.check_and_trigger(pid)
    assert status["unprocessed"] == 3 and not status["triggered"]
    said += env.say(plain, *(f"more {n}" for n in range(27)))
    assert env.trigger.check_and_trigger(pid)["triggered"], \
        "a cancelled learn run is no upstream failure to back off from"
    update = jobs.active_jobs(env.conn, pid).queued
    assert _start(client, later["id"]).status_code == 202
    claimed = jobs.claim_next_job(env.conn, env.update.plan_range)
    assert claimed is not None and claimed.id == update.id
    assert (claimed.message_from, claimed.message_to) == (said[0]["id"], said[-1]["id"])
    env.conn.execute("UPDATE cortex_jobs SET status = 'done' WHERE id = ?", (update.id,))
    learning = jobs.claim_next_job(env.conn, env.update.plan_range)
    assert learning is not None and learning.reason == "learn"
    env.say(plain, "One more thing.")
    assert env.trigger.status(pid)["progress"] == 1.0, \
        "all 31 unprocessed chat messages count (30 reach the threshold), also those below the " \
        "imported ids the running learn run covers"


def test_deleting_imported_messages_while_their_learn_proposal_waits_is_reconciled(
        client, env, pid, chat, claude):
    review_on(client, pid)
    claude.enqueue(*window_replies("- Robin woke in my glade.", "- The wards keep Robin safe."))
    assert _start(client, chat["id"], window_messages=3).status_code == 202
    env.worker.run_pending()
    proposal_id = _learn(client, chat["id"])["proposal_id"]
    assert client.delete(f"/api/sessions/{chat['id']}/messages/last").status_code in (200, 204)
    queued = jobs.active_jobs(env.conn, pid).queued
    assert queued is not None and queued.reason == "reconcile", \
        "the proposal learned from the deleted message, so memory must follow"
    calls = len(claude.requests)
    claude.enqueue(replies.tool_use([("str_replace", {
        "filename": "memory.md", "old_str": "- The wards keep Robin safe.\n", "new_str": ""})]),
        replies.text("Forgot the wards."))
    [job] = env.worker.run_pending()
    assert (job.reason, job.status) == ("reconcile", "done"), job
    assert "The glade's wards" in prompt_text(claude.requests[calls])
    proposal = client.get(f"/api/personas/{pid}/cortex/proposals/{proposal_id}").get_json()
    [memory] = proposal["files"]
    assert "Robin woke in my glade" in memory["content"]
    assert "The wards keep Robin safe" not in memory["content"]


def test_learn_responses_conform_to_the_api_document(client, env, pid, chat, claude):
    conform = Conformance(build_document())
    base = "/api/sessions/{sid}/learn"
    sid = chat["id"]
    conform(client.get(f"/api/sessions/{sid}/learn"), "GET", base)
    conform(client.get(f"/api/sessions/{sid}/learn/estimate?window_messages=2"), "GET",
            base + "/estimate")
    started = conform(_start(client, sid, window_messages=2), "POST", base)
    conform(_start(client, sid), "POST", base)  # 409 learn_in_progress
    conform(client.post(f"/api/sessions/{sid}/learn/cancel"), "POST", base + "/cancel")
    conform(client.post(f"/api/sessions/{sid}/learn/cancel"), "POST", base + "/cancel")  # 409
    claude.enqueue(*window_replies("- one", "- two", "- three"))
    assert _start(client, sid, window_messages=2).status_code == 202
    env.worker.run_pending()
    done = conform(client.get(f"/api/sessions/{sid}/learn"), "GET", base).get_json()["run"]
    assert done["status"] == "done" and done["job_id"] != started.get_json()["job_id"]
    job = conform(client.get(f"/api/cortex/jobs/{done['job_id']}"), "GET",
                  "/api/cortex/jobs/{job_id}").get_json()
    assert (job["reason"], job["status"], job["files"]) == ("learn", "done", ["memory.md"])
