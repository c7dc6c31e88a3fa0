"""Jobs never stay `running` for a dead process (issue 9 §4): ownership is a lock file the owner
holds for its lifetime, which zombies and reused pids cannot fake, and a running job's lease
expires unless its owner's heartbeat renews it."""
import os
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.cortex.ownership import ProcessOwner, owner_alive, owners_dir
from src.utils.models.cortex import CortexJob
from src.utils.storage import cortex_jobs as jobs
from tests.cortex.support import REPO
from tests.cortex.update_support import PID, Env
from tests.fakes.claude import replies

DEADLINE = 10.0


def _owner_process(data_dir, mode: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.robustness.owner_child",
                             str(data_dir), mode], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def _wait_until(condition, what: str) -> None:
    """Polls `condition` (state another process changes) until it holds or the deadline."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.01)


def _is_zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"


@contextmanager
def _restarted(app_config):
    """Another app on the same data directory, as after a restart (start-up recovery runs)."""
    app = create_app(dict(app_config))
    try:
        yield Env(app)
    finally:
        provider.shutdown_services(app)


def _running_job(env, owner: str, pid: int, lease_seconds: float = 600.0) -> CortexJob:
    env.persona()
    env.chat(env.session(), 2)
    job, _ = env.trigger.request_update(PID)
    jobs.claim_next_job(env.conn, env.update.plan_range, owner=owner, lease_seconds=lease_seconds)
    env.conn.execute("UPDATE cortex_jobs SET claimed_by = ? WHERE id = ?", (pid, job.id))
    return jobs.get_job(env.conn, job.id)


def _lease_until(env, job_id: str) -> float:
    """The job's lease as stored (the runner's; a job read back does not show it)."""
    return env.conn.execute("SELECT lease_until FROM cortex_jobs WHERE id = ?",
                            (job_id,)).fetchone()[0]


def test_a_job_of_a_zombie_owner_is_recovered_at_restart(env, app_config, data_dir):
    with _owner_process(data_dir, "exit") as zombie:
        token = zombie.stdout.readline().strip()
        _wait_until(lambda: _is_zombie(zombie.pid), "the owner is a zombie")
        os.kill(zombie.pid, 0)  # the zombie still answers the old liveness check
        job = _running_job(env, token, zombie.pid)

        with _restarted(app_config):
            recovered = jobs.get_job(env.conn, job.id)
        assert (recovered.status, recovered.error, recovered.retryable) == (
            "failed", "interrupted", True)
        assert not os.path.exists(os.path.join(owners_dir(data_dir), token + ".lock"))
        zombie.wait(timeout=DEADLINE)


def test_a_job_whose_pid_now_belongs_to_another_process_is_recovered(env, app_config,
                                                                      data_dir):
    with _owner_process(data_dir, "hold") as gone:
        token = gone.stdout.readline().strip()
        gone.stdin.close()
        gone.wait(timeout=DEADLINE)
    with _owner_process(data_dir, "hold") as reused:  # a live process with the job's pid
        reused.stdout.readline()
        job = _running_job(env, token, reused.pid)
        with _restarted(app_config):
            assert jobs.get_job(env.conn, job.id).error == "interrupted"
        reused.stdin.close()
        reused.wait(timeout=DEADLINE)


def test_a_live_owners_job_survives_a_restart_until_its_lease_runs_out(env, app_config,
                                                                       data_dir):
    with _owner_process(data_dir, "hold") as owner:
        token = owner.stdout.readline().strip()
        job = _running_job(env, token, owner.pid, lease_seconds=60)
        with _restarted(app_config) as restarted:
            assert jobs.get_job(env.conn, job.id).status == "running"
            lease_until = _lease_until(env, job.id)
            # judged against the stored lease, not the clock: a slow restart on a busy machine
            # must not bring the end of the lease closer
            assert restarted.worker.recover_interrupted(now=lease_until - 1) == 0
            assert restarted.worker.recover_interrupted(now=lease_until + 1) == 1
        assert jobs.get_job(env.conn, job.id).error == "interrupted"
        owner.stdin.close()
        owner.wait(timeout=DEADLINE)


def test_a_running_worker_takes_back_an_expired_lease_without_a_restart(env, app_config,
                                                                          data_dir):
    """The owner lives (its lock is held) but stopped renewing: the loop of a worker that is
    already running marks the job `interrupted` once the lease is over, with no restart."""
    with _owner_process(data_dir, "hold") as owner:
        token = owner.stdout.readline().strip()
        job = _running_job(env, token, owner.pid)
        running = create_app({**app_config, "CORTEX_WORKER": True})
        try:
            assert jobs.get_job(env.conn, job.id).status == "running"  # start-up kept it
            env.conn.execute("UPDATE cortex_jobs SET lease_until = ? WHERE id = ?",
                             (time.time() + 0.3, job.id))  # the owner stops renewing
            _wait_until(lambda: jobs.get_job(env.conn, job.id).error == "interrupted",
                        "the running worker's loop took the expired lease back")
        finally:
            provider.shutdown_services(running)
        owner.stdin.close()
        owner.wait(timeout=DEADLINE)


@pytest.fixture
def short_lease_env(app_config, claude):
    """An app whose jobs hold a 3 s lease (renewed every second while they run): short enough
    for a test to outlast it, long enough that a heartbeat delayed by a busy machine does not
    let it lapse while the restarted app's start-up recovery looks at the real clock."""
    app = create_app({**app_config, "CORTEX_JOB_LEASE": 3.0})
    yield Env(app)
    provider.shutdown_services(app)


def test_the_heartbeat_keeps_a_long_run_past_its_first_lease(short_lease_env, app_config,
                                                             claude):
    env = short_lease_env
    checked = {}

    def model(body):
        job = env.conn.execute("SELECT id, lease_until FROM cortex_jobs "
                               "WHERE status = 'running'").fetchone()
        first = job["lease_until"]
        _wait_until(lambda: _lease_until(env, job["id"]) >= first + 0.15,
                    "the heartbeat renewed the lease")
        with _restarted(app_config) as other:
            checked["reaped"] = other.worker.recover_interrupted(now=first + 0.1)
        return replies.text("Nothing to change.")

    claude.default = replies.scripted(model)
    env.persona()
    env.chat(env.session(), 2)
    job = env.run_job()
    assert checked == {"reaped": 0}
    assert job.status == "done"


def test_owner_lock_files_go_with_their_owner(data_dir):
    owner = ProcessOwner(str(data_dir)).open()
    directory = owners_dir(str(data_dir))
    assert owner_alive(directory, owner.token) and owner.is_alive(owner.token)
    assert not owner_alive(directory, "0" * 32) and not owner_alive(directory, None)
    assert not owner_alive(directory, "../../app")
    owner.close()
    assert not owner_alive(directory, owner.token) and os.listdir(directory) == []
