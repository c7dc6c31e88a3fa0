"""SIGKILL of the process running a learn run, mid-way (window 2 of 3 held by the Claude fake):
after a restart the cortex is exactly as before (files, revisions, anchors, processed mark), the
run is `failed` (`interrupted`) and a new run can start."""
import json
import signal
import subprocess
import sys
import threading

from src.app import create_app
from src.utils import provider
from tests.cortex.learn_support import cortex_state, import_chat, window_replies
from tests.cortex.support import REPO
from tests.cortex.update_support import Env
from tests.fakes.claude import replies


def test_sigkill_mid_run_applies_nothing_and_the_run_fails_cleanly(app_config, claude):
    app = create_app(app_config)
    try:
        client = app.test_client()
        pid = client.post("/api/personas", json={"name": "Seraphina"}).get_json()["id"]
        Env(app).cortex.read_all_info(pid)
        chat = import_chat(client, pid)
        before = cortex_state(Env(app), pid)
        gate = threading.Event()
        scripted = window_replies("- one", "- two", "- three")
        scripted[2] = replies.gated(scripted[2], gate)
        claude.enqueue(*scripted)
        start = client.post(f"/api/sessions/{chat['id']}/learn", json={"window_messages": 2})
        assert start.status_code == 202, start.get_json()
    finally:
        provider.shutdown_services(app)
    child = subprocess.Popen([sys.executable, "-m", "tests.cortex.learn_child",
                              json.dumps(app_config)], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        claude.wait_for_requests(3, timeout=60)  # window 1 done, window 2's first round held
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=20)
    finally:
        gate.set()
        child.stdout.close()
        child.stderr.close()

    restarted = create_app(app_config)
    try:
        client = restarted.test_client()
        run = client.get(f"/api/sessions/{chat['id']}/learn").get_json()["run"]
        assert (run["status"], run["error"], run["windows_done"]) == ("failed", "interrupted", 1)
        assert cortex_state(Env(restarted), pid) == before
        claude.enqueue(*window_replies("- one", "- two", "- three"))
        again = client.post(f"/api/sessions/{chat['id']}/learn", json={"window_messages": 2})
        assert again.status_code == 202, again.get_json()
        provider.get_cortex_worker(restarted).run_pending()
        assert client.get(f"/api/sessions/{chat['id']}/learn").get_json()["run"]["status"] == "done"
    finally:
        provider.shutdown_services(restarted)
