"""When cortex updates are queued: threshold, idle, coalescing, restarts, disabled cortex."""
import subprocess
import sys
import threading
import time

import pytest

from src.utils import provider
from src.utils.cortex.trigger import CortexDisabled, CortexTrigger
from src.utils.models.cortex import ActiveJobs
from src.utils.storage import cortex_input, cortex_jobs as jobs, generations
from src.utils.storage.messages import add_message
from tests.cortex.update_support import OTHER, PID, Env, second_app
from tests.fakes.claude import replies


def _jobs(env, pid=PID) -> list[dict]:
    return [dict(r) for r in env.conn.execute(
        "SELECT id, status, trigger FROM cortex_jobs WHERE persona_id = ? ORDER BY rowid", (pid,))]


def test_threshold_fires_at_the_threshold_and_not_before(env):
    env.persona()
    sid = env.session()
    env.chat(sid, 29)
    state = env.trigger.check_and_trigger(PID, sid)
    assert state == {"triggered": False, "job_id": None, "progress": round(29 / 30, 4),
                     "frequency": "medium", "unprocessed": 29, "threshold": 30, "enabled": True}
    assert _jobs(env) == []

    env.say(sid, "the thirtieth message")
    state = env.trigger.check_and_trigger(PID, sid)
    assert state["triggered"] is True and state["progress"] == 1.0
    assert _jobs(env) == [{"id": state["job_id"], "status": "queued", "trigger": "threshold"}]


@pytest.mark.parametrize("context_limit, frequency, threshold", [
    (40, "frequent", 20), (40, "medium", 30), (40, "rare", 38),
    (20, "frequent", 10), (20, "medium", 15), (20, "rare", 19)])
def test_frequency_is_a_share_of_the_context_limit(env, context_limit, frequency, threshold):
    env.settings("app", {"context_limit": context_limit})
    env.settings("cortex", {"enabled": True, "frequency": frequency, "idle_minutes": 30})
    env.persona()
    sid = env.session()
    env.chat(sid, threshold - 1)
    assert env.trigger.check_and_trigger(PID, sid)["triggered"] is False
    env.chat(sid, 1)
    state = env.trigger.check_and_trigger(PID, sid)
    assert (state["triggered"], state["threshold"], state["frequency"]) == (True, threshold,
                                                                           frequency)


@pytest.mark.parametrize("stored", [2, 401, "40", True, None])
def test_a_stored_context_limit_the_chat_ignores_is_ignored_by_the_trigger_too(env, stored):
    """The bounds live in models/settings.py alone: a value the settings refuse (below 4,
    above 400, not a whole number) leaves the default of 40 for the chat and the trigger."""
    env.settings("app", {"context_limit": stored})
    env.persona()
    sid = env.session()
    state = env.trigger.check_and_trigger(PID, sid)
    assert state["threshold"] == 30
    assert provider.get_settings_service(env.app).values().context_limit == 40


def test_messages_count_across_the_personas_sessions_only(env):
    env.persona()
    env.persona(OTHER, name="Bert")
    first, second = env.session(), env.session()
    env.chat(env.session(OTHER), 40)
    env.chat(first, 15)
    env.chat(second, 14)
    assert env.trigger.check_and_trigger(PID, second)["unprocessed"] == 29
    assert env.trigger.check_and_trigger(PID, second)["triggered"] is False
    env.chat(first, 1)
    assert env.trigger.check_and_trigger(PID, first)["triggered"] is True
    assert env.trigger.status(OTHER)["unprocessed"] == 40


def test_success_resets_the_count_and_failure_keeps_it(env, claude):
    env.persona()
    sid = env.session()
    env.chat(sid, 30)
    claude.enqueue(replies.server_error())
    job = env.run_job()
    assert job.status == "failed"
    assert env.trigger.status(PID)["unprocessed"] == 30
    claude.enqueue(replies.text("Nothing to change."))
    assert env.run_job().status == "done"
    assert env.trigger.status(PID) | {"job_id": None} == {
        "triggered": False, "job_id": None, "progress": 0.0, "frequency": "medium",
        "unprocessed": 0, "threshold": 30, "enabled": True}


def test_after_a_failure_automatic_triggers_wait_before_retrying(env, claude):
    clock = [time.time()]
    trigger = CortexTrigger(env.db, env.worker, clock=lambda: clock[0], retry_delay=120)
    env.persona()
    sid = env.session()
    env.chat(sid, 30)
    claude.enqueue(replies.overloaded())
    assert trigger.check_and_trigger(PID, sid)["triggered"] is True
    assert env.worker.run_pending()[0].error == "overloaded"
    clock[0] = time.time()  # the job's end is stored by the real clock; the wait counts from it
    assert trigger.check_and_trigger(PID, sid)["triggered"] is False
    clock[0] += 121
    assert trigger.check_and_trigger(PID, sid)["triggered"] is True


def test_idle_session_with_unprocessed_messages_triggers_an_update(env, claude):
    env.persona()
    env.chat(env.session(), 2)
    now = time.time()
    assert env.trigger.scan_idle(now=now) == []
    assert env.trigger.scan_idle(now=now + 29 * 60) == []
    queued = env.trigger.scan_idle(now=now + 31 * 60)
    assert _jobs(env) == [{"id": queued[0], "status": "queued", "trigger": "idle"}]
    assert env.trigger.scan_idle(now=now + 32 * 60) == queued

    claude.enqueue(replies.text("ok"))
    assert env.worker.run_pending()[0].status == "done"
    assert env.trigger.scan_idle(now=now + 90 * 60) == []


def test_idle_minutes_setting_is_used(env):
    env.settings("cortex", {"enabled": True, "frequency": "medium", "idle_minutes": 5})
    env.persona()
    env.chat(env.session(), 1)
    now = time.time()
    assert env.trigger.scan_idle(now=now + 4 * 60) == []
    assert len(env.trigger.scan_idle(now=now + 6 * 60)) == 1


def test_a_second_trigger_while_queued_returns_the_same_job(env):
    env.persona()
    sid = env.session()
    env.chat(sid, 30)
    first = env.trigger.check_and_trigger(PID, sid)
    second = env.trigger.check_and_trigger(PID, sid)
    on_demand, created = env.trigger.request_update(PID)
    assert first["job_id"] == second["job_id"] == on_demand.id and created is False
    assert len(_jobs(env)) == 1


def test_a_trigger_while_running_schedules_exactly_one_follow_up(env, claude):
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("first"), gate), replies.text("second"))
    env.persona()
    sid = env.session()
    first_batch = env.chat(sid, 30)
    running = env.trigger.check_and_trigger(PID, sid)["job_id"]
    env.worker.start()
    try:
        claude.wait_for_requests(1)
        assert jobs.get_job(env.conn, running).status == "running"
        covered = env.trigger.check_and_trigger(PID, sid)
        assert (covered["triggered"], covered["job_id"], covered["progress"]) == (False, running,
                                                                                  0.0)
        second_batch = env.chat(sid, 30, prefix="n")
        follow_ups = {env.trigger.check_and_trigger(PID, sid)["job_id"] for _ in range(3)}
        follow_ups.add(env.trigger.request_update(PID)[0].id)
        assert len(follow_ups) == 1 and running not in follow_ups
        gate.set()
        done = [env.worker.wait_for_job(job_id) for job_id in (running, *follow_ups)]
    finally:
        gate.set()
        env.worker.stop()
    assert [j.status for j in done] == ["done", "done"]
    assert (done[0].message_from, done[0].message_to) == (first_batch[0]["id"],
                                                                first_batch[-1]["id"])
    assert (done[1].message_from, done[1].message_to) == (second_batch[0]["id"],
                                                                second_batch[-1]["id"])
    assert len(_jobs(env)) == 2 and env.processed() == second_batch[-1]["id"]


def test_jobs_left_running_by_a_restart_are_failed_and_retryable(env, app_config):
    env.persona()
    env.chat(env.session(), 2)
    job, _ = env.trigger.request_update(PID)
    assert jobs.claim_next_job(env.conn, env.update.plan_range).status == "running"

    restarted = Env(second_app(app_config))
    job = jobs.get_job(restarted.conn, job.id)
    assert (job.status, job.error, job.retryable) == ("failed", "interrupted", True)
    assert restarted.trigger.status(PID)["unprocessed"] == 2
    later = time.time() + 3600
    assert len(restarted.trigger.scan_idle(now=later)) == 1


def test_a_disabled_cortex_never_triggers_or_updates(env, claude):
    env.settings("cortex", {"enabled": False, "frequency": "frequent", "idle_minutes": 1})
    env.persona()
    sid = env.session()
    env.chat(sid, 40)
    state = env.trigger.check_and_trigger(PID, sid)
    assert (state["triggered"], state["job_id"], state["enabled"]) == (False, None, False)
    assert env.trigger.scan_idle(now=time.time() + 86400) == []
    with pytest.raises(CortexDisabled):
        env.trigger.request_update(PID)
    assert env.update.run(PID)["error"] == "cortex_disabled"
    assert _jobs(env) == [] and claude.requests == []


def test_background_worker_runs_a_triggered_job_and_tells_subscribers(app_config, claude):
    env = Env(second_app({**app_config, "CORTEX_WORKER": True}))
    try:
        assert env.worker.running
        events, seen = [], threading.Event()
        env.worker.subscribe(lambda event: (events.append(event), seen.set()))
        claude.enqueue(replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                     "insert_text": "- Jonas plays chess."})]),
                       replies.text("Noted chess."))
        env.persona()
        sid = env.session()
        env.chat(sid, 30)
        state = env.trigger.check_and_trigger(PID, sid)
        job = env.worker.wait_for_job(state["job_id"], timeout=10)
        assert seen.wait(5)
    finally:
        env.worker.stop()
    assert not env.worker.running
    assert (job.status, job.files, job.summary) == ("done", ["memory.md"], "Noted chess.")
    assert events == [{"job_id": job.id, "persona_id": PID, "status": "done",
                       "files": ["memory.md"], "error": None, "reason": "threshold"}]
    assert env.read("memory.md").startswith("- Jonas plays chess.\n")


def test_wait_for_job_times_out_without_a_worker(env):
    env.persona()
    job, _ = env.trigger.request_update(PID)
    with pytest.raises(TimeoutError):
        env.worker.wait_for_job(job.id, timeout=0.05)
    assert provider.get_cortex_worker(env.app) is env.worker


def test_a_job_finished_by_another_process_reaches_this_process_subscribers(env, app_config,
                                                                             claude):
    listener = Env(second_app({**app_config, "CORTEX_WORKER": True}))
    try:
        events, seen = [], threading.Event()
        listener.worker.subscribe(lambda event: (events.append(event), seen.set()))
        claude.enqueue(replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                     "insert_text": "- Jonas plays go."})]),
                       replies.text("Noted go."))
        env.persona()
        env.say(env.session(), "I play go.", "Nice!")
        job, _ = env.trigger.request_update(PID)
        env.worker.run_pending()  # nearly always wins the claim: the listener polls each second
        assert seen.wait(5), "the other worker never announced the job"
        job = listener.worker.wait_for_job(job.id, timeout=5)
    finally:
        listener.worker.stop()
    assert events == [{"job_id": job.id, "persona_id": PID, "status": "done",
                       "files": ["memory.md"], "error": None, "reason": "manual"}]


def test_a_job_another_live_process_runs_survives_a_worker_starting_up(env, app_config,
                                                                       data_dir):
    env.persona()
    env.chat(env.session(), 2)
    job, _ = env.trigger.request_update(PID)
    with subprocess.Popen([sys.executable, "-m", "tests.robustness.owner_child", str(data_dir),
                           "hold"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as other:
        token = other.stdout.readline().strip()
        jobs.claim_next_job(env.conn, env.update.plan_range, owner=token, lease_seconds=600)
        Env(second_app(app_config))
        assert jobs.get_job(env.conn, job.id).status == "running"
        other.stdin.close()
        other.wait(timeout=10)
    Env(second_app(app_config))
    assert jobs.get_job(env.conn, job.id).error == "interrupted"


def test_active_jobs_are_the_personas_queued_and_running_ones(env):
    """The per-turn lookup of the queued and running job (statuses written into the SQL, one
    plan each) finds the same jobs as before: this persona's only, regular update first."""
    env.persona()
    env.persona(OTHER, name="Bert")
    assert jobs.active_jobs(env.conn, PID) == ActiveJobs(queued=None, running=None)
    consolidate, _ = jobs.enqueue_job(env.conn, PID, "manual", reason="consolidate")
    assert jobs.active_jobs(env.conn, PID).queued.id == consolidate.id
    regular, _ = jobs.enqueue_job(env.conn, PID, "threshold")
    jobs.enqueue_job(env.conn, OTHER, "threshold")
    assert jobs.active_jobs(env.conn, PID) == ActiveJobs(
        queued=jobs.get_job(env.conn, regular.id), running=None)
    running = jobs.claim_next_job(env.conn, env.update.plan_range)
    active = jobs.active_jobs(env.conn, running.persona_id)
    assert active.running == jobs.get_job(env.conn, running.id)
    assert active.running.status == "running"


def _as_six_queries(conn, pid=PID) -> dict:
    """What the trigger check computed from six queries before they became one."""
    last = jobs.last_processed_id(conn, pid)
    active = jobs.active_jobs(conn, pid)
    covered = max(last, jobs.covered_to(active.running))
    return {"last": last, "queued_id": active.queued.id if active.queued else None,
            "running_id": active.running.id if active.running else None,
            "unprocessed": cortex_input.count_after(conn, pid, last),
            "pending": cortex_input.count_after(conn, pid, covered)}


def _state(conn) -> dict:
    state = dict(cortex_input.trigger_state(conn, PID))
    assert state.pop("config_generation") == generations.read(conn).config
    assert state == _as_six_queries(conn)
    return state


def test_the_trigger_state_counts_what_no_update_covers(env):
    """The trigger's one statement (`cortex_input.trigger_state`) against what its six queries
    said: the mark, the queued job (a regular update before a consolidation), the running one,
    the messages after the mark and those its regular update does not cover (a consolidation
    covers none); a streaming reply and other personas' messages never count."""
    env.persona()
    env.persona(OTHER, name="Bert")
    sid = env.session()
    env.chat(env.session(OTHER), 5)
    first = env.chat(sid, 4)
    assert _state(env.conn) == {
        "last": 0, "queued_id": None, "running_id": None, "unprocessed": 4, "pending": 4}
    job, _ = jobs.enqueue_job(env.conn, PID, "threshold")
    running = jobs.claim_next_job(env.conn, env.update.plan_range)
    assert (running.id, running.message_to) == (job.id, first[-1]["id"])
    env.chat(sid, 3, prefix="n")
    add_message(env.conn, sid, "assistant", "", streaming=True)
    consolidate, _ = jobs.enqueue_job(env.conn, PID, "manual", reason="consolidate")
    state = _state(env.conn)
    assert state == {"last": 0, "queued_id": consolidate.id, "running_id": job.id,
                     "unprocessed": 7, "pending": 3}
    queued, _ = jobs.enqueue_job(env.conn, PID, "threshold")
    assert _state(env.conn)["queued_id"] == queued.id
    env.conn.execute("UPDATE cortex_jobs SET reason = 'consolidate' WHERE id = ?", (job.id,))
    assert _state(env.conn)["pending"] == 7
    jobs.mark_processed(env.conn, PID, first[1]["id"])
    assert _state(env.conn) | {"queued_id": None} == {
        "last": first[1]["id"], "queued_id": None, "running_id": job.id, "unprocessed": 5,
        "pending": 5}
