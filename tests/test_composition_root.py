"""Build, then start (docs/development.md#composition-root-build-then-start): building the
services touches nothing and runs nothing; the start-up work (migrations, seeding, recovery,
the worker thread) happens in `start`, which `create_app` calls and a test may skip."""
import gc
import os
import sqlite3
import threading
import time
import weakref
from contextlib import closing

import pytest

from src import config as config_module
from src.app import create_app
from src.utils import provider
from src.utils.services_root import Services, build_services, start, stop
from tests.cortex.update_support import PID, Env

DEAD_OWNER = "0" * 32  # a token no process holds a lock file for


def _config(app_config: dict, **changes) -> dict:
    """The full configuration `create_app` would use for `app_config`."""
    return config_module.load(app_config["DATA_DIR"], {**app_config, **changes})


def _disk(path) -> dict:
    """Everything under `path` a write would change: names, kinds, sizes, times and modes."""
    found = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            info = os.lstat(full)
            found[os.path.relpath(full, path)] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def _built(config: dict) -> tuple[Services, set, dict]:
    """Services built for `config`, with the threads and files there were before building."""
    threads, disk = set(threading.enumerate()), _disk(config["DATA_DIR"])
    return build_services(config), threads, disk


def _job_row(data_dir, job_id: str) -> dict:
    """The job as stored, read on a connection of the test's own."""
    with closing(sqlite3.connect(os.path.join(data_dir, "app.db"))) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT status, error FROM cortex_jobs WHERE id = ?",
                           (job_id,)).fetchone()
    return dict(row)


def test_building_on_a_fresh_directory_creates_nothing_and_starts_no_thread(app_config,
                                                                             tmp_path):
    config = _config(app_config, DATA_DIR=str(tmp_path / "fresh"), CORTEX_WORKER=True)
    services, threads, _ = _built(config)
    try:
        assert set(threading.enumerate()) <= threads  # none new (an earlier one may end)
        assert not os.path.exists(config["DATA_DIR"])
    finally:
        stop(services)
    assert not os.path.exists(config["DATA_DIR"])  # stopping what never started writes nothing


def test_building_on_a_previous_runs_directory_changes_nothing(app_config, data_dir):
    provider.shutdown_services(create_app(app_config))  # a previous run left its files
    services, threads, disk = _built(_config(app_config, CORTEX_WORKER=True))
    try:
        assert set(threading.enumerate()) <= threads  # none new (an earlier one may end)
        assert _disk(data_dir) == disk
    finally:
        stop(services)
    assert _disk(data_dir) == disk


def test_start_seeds_and_opens_what_build_left_alone(app_config, tmp_path):
    config = _config(app_config, DATA_DIR=str(tmp_path / "fresh"))
    services = build_services(config)
    try:
        start(services)
        assert [p.id for p in services.personas.list()] == ["default"]
        assert os.path.isfile(os.path.join(config["DATA_DIR"], "locks", "sessions.lock"))
        assert services.job_owner.is_alive(services.job_owner.token)
    finally:
        stop(services)
    assert not services.job_owner.is_alive(services.job_owner.token)


def test_an_interrupted_job_of_a_previous_run_is_recovered_by_start_not_by_build(app_config,
                                                                                  data_dir):
    app = create_app(app_config)
    try:
        env = Env(app)
        env.persona()
        env.chat(env.session(), 2)
        job, _ = env.trigger.request_update(PID)
        env.conn.execute("UPDATE cortex_jobs SET status = 'running', owner = ?, lease_until = ? "
                         "WHERE id = ?", (DEAD_OWNER, time.time() + 600, job.id))
    finally:
        provider.shutdown_services(app)
    assert _job_row(data_dir, job.id)["status"] == "running"

    services = build_services(_config(app_config))
    try:
        assert _job_row(data_dir, job.id)["status"] == "running"
        start(services)
        assert _job_row(data_dir, job.id) == {"status": "failed", "error": "interrupted"}
    finally:
        stop(services)


@pytest.mark.parametrize("run_worker", [True, False])
def test_the_worker_thread_runs_from_start_to_stop_only_when_configured(app_config, run_worker):
    services, threads, _ = _built(_config(app_config, CORTEX_WORKER=run_worker))
    try:
        assert services.cortex_worker.running is False
        start(services)
        assert services.cortex_worker.running is run_worker
        started = {t.name for t in set(threading.enumerate()) - threads}
        assert started == ({"cortex-worker"} if run_worker else set())
    finally:
        stop(services)
    assert services.cortex_worker.running is False
    worker = weakref.ref(services.cortex_worker)
    del services
    gc.collect()
    assert worker() is None  # nothing (no exit hook) keeps a stopped app alive


def test_the_services_are_frozen(app_config):
    services = build_services(_config(app_config))
    try:
        with pytest.raises(AttributeError):
            services.db = services.db  # type: ignore[misc]
    finally:
        stop(services)


def test_create_app_builds_then_starts(app):
    services = provider.services_of(app)
    assert isinstance(services, Services)
    assert provider.get_cortex_service(app) is services.cortex
    assert services.job_owner.is_alive(services.job_owner.token)  # started
    assert [p.id for p in services.personas.list()] == ["default"]  # seeded
