"""Deleting a persona is final: nothing that raced the delete, or waited for its lock, brings its
memories back, and nothing is left when the process dies half-way through a delete.

The races are ordered by the persona's cortex lock, not by sleeps: a request that has passed its
checks waits for the lock (the kernel lists it in /proc/locks), the delete runs to the end while
it waits, and only then does the request go on.
"""
import http.client
import json
import os
import sqlite3
import threading
from contextlib import closing

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.cortex import PersonaNotFound
from tests.robustness.servers import ServerProcess
from tests.support.flocks import held, lock_path, wait_for_waiters

FILE = "/api/personas/{pid}/cortex/memory.md"


def _rows(data_dir, sql: str, *params) -> list:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        return conn.execute(sql, params).fetchall()


def assert_nothing_left(data_dir, pid: str) -> None:
    """No row, revision, tombstone, cortex directory or lock file of `pid` remains."""
    assert _rows(data_dir, "SELECT 1 FROM personas WHERE id = ?", pid) == []
    assert _rows(data_dir, "SELECT id FROM cortex_revisions WHERE persona_id = ?", pid) == []
    assert _rows(data_dir, "SELECT 1 FROM persona_deletions WHERE persona_id = ?", pid) == []
    assert not (data_dir / "cortex" / "custom" / pid).exists()
    assert not os.path.exists(lock_path(data_dir, pid))


@pytest.fixture
def persona(client):
    response = client.post("/api/personas", json={"name": "Ephemeral"})
    assert response.status_code == 201
    pid = response.get_json()["id"]
    path = FILE.format(pid=pid)
    etag = client.get(path).headers["ETag"]
    assert client.put(path, json={"content": "A secret to forget\n"},
                      headers={"If-Match": etag}).status_code == 200
    return pid


def test_a_deleted_personas_cortex_is_never_created_again(app, client, data_dir, persona):
    assert client.delete(f"/api/personas/{persona}").status_code == 200
    cortex = provider.get_cortex_service(app)
    for call in (lambda: cortex.read_file_info(persona, "memory.md"),
                 lambda: cortex.read_all_info(persona),
                 lambda: cortex.history(persona, "soul.md"),
                 lambda: cortex.ensure_cortex_files(persona),
                 lambda: cortex.write_file(persona, "memory.md", "back again"),
                 lambda: cortex.edit_file(persona, "memory.md", lambda text: text + "x")):
        with pytest.raises(PersonaNotFound):
            call()
    assert client.get(FILE.format(pid=persona)).status_code == 404
    assert_nothing_left(data_dir, persona)


def test_an_update_staged_before_the_delete_recreates_nothing(app, client, data_dir, persona):
    cortex = provider.get_cortex_service(app)
    staged = cortex.stage(persona)
    staged.insert("memory.md", 0, "- a fact the update found\n")
    assert client.delete(f"/api/personas/{persona}").status_code == 200
    with pytest.raises(PersonaNotFound):
        cortex.apply_staged(staged)
    assert_nothing_left(data_dir, persona)


@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_a_request_waiting_for_the_lock_while_the_persona_is_deleted_gets_404(
        app, server, app_config, data_dir, persona, method):
    other = create_app(app_config)  # a second process's services on the same data directory
    try:
        path = lock_path(data_dir, persona)
        inode = os.stat(path).st_ino
        holding, go, results = threading.Event(), threading.Event(), []

        def delete_while_holding_the_lock():
            with provider.get_cortex_service(other).lock(persona):
                holding.set()
                assert go.wait(20)
                provider.get_persona_service(other).delete(persona)

        def request():
            body = json.dumps({"content": "written after the delete\n"}) if method == "PUT" \
                else None
            with closing(http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)) as conn:
                conn.request(method, FILE.format(pid=persona), body,
                             {"Content-Type": "application/json", "If-Match": "*"})
                response = conn.getresponse()
                results.append((response.status, json.loads(response.read())))

        deleter = threading.Thread(target=delete_while_holding_the_lock)
        deleter.start()
        assert holding.wait(20)
        requester = threading.Thread(target=request)
        requester.start()
        wait_for_waiters(inode)  # the request passed its checks and waits for the lock
        go.set()
        deleter.join(20)
        requester.join(20)
        assert not deleter.is_alive() and not requester.is_alive()
    finally:
        provider.shutdown_services(other)
    status, body = results[0]
    assert (status, body["error"]["code"]) == (404, "persona_not_found"), body
    assert_nothing_left(data_dir, persona)


def test_start_up_removes_what_a_deleted_persona_left_behind(app, client, app_config, data_dir,
                                                              persona, caplog):
    with closing(sqlite3.connect(data_dir / "app.db")) as conn, conn:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("DELETE FROM personas WHERE id = ?", (persona,))  # an old, half-done delete
    unknown = data_dir / "cortex" / "custom" / "handmade0001"
    unknown.mkdir()
    (unknown / "memory.md").write_text("copied in by hand\n")
    assert (data_dir / "cortex" / "custom" / persona).is_dir()

    restarted = create_app(app_config)
    provider.shutdown_services(restarted)
    assert_nothing_left(data_dir, persona)
    assert not unknown.exists()
    [kept] = (data_dir / "quarantine").iterdir()
    assert kept.name.startswith("cortex-handmade0001-")
    assert (kept / "memory.md").read_text() == "copied in by hand\n"
    assert "1 removed, 1 quarantined" in caplog.text
    assert client.get("/api/personas/default/cortex/memory.md").status_code == 200


def test_start_up_completes_a_delete_that_stopped_after_its_tombstone(app_config, data_dir):
    first = create_app(app_config)
    try:
        pid = provider.get_persona_service(first).create({"name": "Half gone"}).id
        db = provider.get_db(first)
        with db.transaction():
            db.conn().execute("DELETE FROM personas WHERE id = ?", (pid,))
            db.conn().execute("INSERT INTO persona_deletions VALUES (?, 'then')", (pid,))
    finally:
        provider.shutdown_services(first)
    assert (data_dir / "cortex" / "custom" / pid).is_dir()
    provider.shutdown_services(create_app(app_config))
    assert_nothing_left(data_dir, pid)


def _delete_through_a_crash(server, pid: str, outcome: list) -> None:
    try:
        outcome.append(server.call("DELETE", f"/api/personas/{pid}")[0])
    except (OSError, http.client.HTTPException) as exc:  # the server was killed meanwhile
        outcome.append(type(exc).__name__)


def test_sigkill_during_a_delete_that_waits_for_the_lock_then_restart_leaves_nothing(
        data_dir, tmp_path):
    with ServerProcess(data_dir, tmp_path / "first.log") as first:
        status, _, body = first.call("POST", "/api/personas", {"name": "Doomed"})
        assert status == 201
        pid, path = body["id"], FILE.format(pid=body["id"])
        assert first.call("PUT", path, {"content": "A secret to forget\n"},
                          {"If-Match": "*"})[0] == 200
        outcome: list = []
        with held(lock_path(data_dir, pid)):  # as a concurrent write or AI tool call would
            inode = os.stat(lock_path(data_dir, pid)).st_ino
            deleter = threading.Thread(target=_delete_through_a_crash,
                                       args=(first, pid, outcome))
            deleter.start()
            wait_for_waiters(inode)  # the delete waits for the lock
            first.kill()
            deleter.join(30)
        assert not deleter.is_alive() and outcome and outcome[0] != 200
    with ServerProcess(data_dir, tmp_path / "second.log", PERSONA_WORKERS="1") as second:
        assert second.call("GET", f"/api/personas/{pid}")[0] == 404
        assert second.call("GET", path)[0] == 404
    assert_nothing_left(data_dir, pid)
