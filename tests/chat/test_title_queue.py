"""Session titles are queued requests (storage/title_jobs.py, issue #23).

An app served with a memory process (`MEMORY_PROCESS`, a gunicorn chat worker) only queues a
title; the memory process claims and runs it, and the chat worker's sockets hear of it when
the memory process rings the chat workers' news bells (`process_bells.py`; the chat worker's
own look, `NEWS_SECONDS`, is an hour here, so only the ring can tell it), as they hear of a
cortex job it finished. Here the "memory process" is a second app on the same data
directory, as another process would be. A request left running by a process that died does
not keep the session from being named after its next reply.
"""
import threading
import uuid
from contextlib import closing

import pytest

from src.app import create_app
from src.utils import provider
from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from src.utils.storage.clock import utc_now
from src.utils.storage.db import connect
from tests.chat.chat_support import ChatSocketClient, live_config
from tests.fakes import replies
from tests.fakes.messages import Reply
from tests.support.live_server import LiveServer


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@pytest.fixture
def chat_worker(app_config, app, key_hygiene):
    """An app that hands its jobs and titles to a memory process, served on a live server."""
    worker = create_app({**app_config, "MEMORY_PROCESS": True, "NEWS_SECONDS": 3600.0})
    try:
        with LiveServer(worker) as live:
            yield live
    finally:
        provider.shutdown_services(worker)


def _title_requests(claude) -> list:
    return [r for r in claude.requests if r.body.get("max_tokens") == TITLE_MAX_TOKENS]


def test_a_chat_worker_only_queues_the_title_and_hears_when_it_is_set(
        chat_worker, app, claude, script, make_session, rows):
    session = make_session()
    script.title = "Tea and books"
    with ChatSocketClient(chat_worker.ws_url) as ws:
        assert ws.chat(session["id"], "Do you like tea?")[-1]["type"] == "done"
        assert _title_requests(claude) == []
        assert rows("SELECT status FROM title_jobs") == [{"status": "queued"}]

        assert provider.services_of(app).titles.run_next() is True  # the memory process
        title = ws.first("title")
    assert title == {"type": "title", "session_id": session["id"], "title": "Tea and books"}
    assert len(_title_requests(claude)) == 1
    assert rows("SELECT status, error FROM title_jobs") == [{"status": "done", "error": None}]



def test_a_chat_worker_hears_of_a_cortex_job_another_process_finished(
        chat_worker, app, make_session):
    persona = make_session()["persona_id"]
    memory = provider.services_of(app).cortex_worker  # the memory process's
    with ChatSocketClient(chat_worker.ws_url) as ws:
        ws.send(type="subscribe", persona_id=persona)
        ws.until("subscribed")
        job, _ = memory.enqueue(persona)
        memory.run_pending()  # unless its own thread ran it first
        cortex = ws.first("cortex")
    assert (cortex["job_id"], cortex["persona_id"]) == (job.id, persona)
    assert cortex["status"] in ("done", "failed")

def test_a_title_left_running_by_a_dead_process_is_replaced_at_the_next_reply(
        server, app, claude, script, make_session, rows, data_dir):
    session = make_session()
    with closing(connect(str(data_dir / "app.db"))) as conn:
        conn.execute("INSERT INTO title_jobs (id, session_id, user_text, reply_text, status, "
                     "owner, lease_until, created_at) VALUES ('gone', ?, 'a', 'b', 'running', "
                     "?, 1e12, ?)", (session["id"], uuid.uuid4().hex, utc_now()))
    with ChatSocketClient(server.ws_url) as ws:
        assert ws.chat(session["id"], "Do you like tea?")[-1]["type"] == "done"
        assert ws.first("title")["title"] == script.title
    assert rows("SELECT id, status, error FROM title_jobs ORDER BY id = 'gone' DESC") == [
        {"id": "gone", "status": "failed", "error": "interrupted"},
        {"id": rows("SELECT id FROM title_jobs WHERE id != 'gone'")[0]["id"],
         "status": "done", "error": None}]


class _HeldTitle(Reply):
    """Answers a title request once `release` is set (or after 30 s), telling `arrived` first."""

    def __init__(self, arrived: threading.Event, release: threading.Event):
        self.arrived, self.release = arrived, release

    def serve(self, ex) -> None:
        self.arrived.set()
        ex.wait(self.release, 30.0)
        replies.text("Held title").serve(ex)


def test_closing_the_app_waits_for_a_title_request_in_flight(app, server, claude,
                                                              make_session):
    """Inline titles run in threads of their own; closing the app closes the API client, and a
    pool closed while a request still connects never closes that connection (its socket was
    left to the garbage collector, which warned about it during a later test). So the close
    waits for the title requests in flight first."""
    arrived, release = threading.Event(), threading.Event()
    claude.default = replies.scripted(
        lambda body: _HeldTitle(arrived, release) if body.get("max_tokens") == TITLE_MAX_TOKENS
        else replies.text("Hello there."))
    session = make_session()
    with ChatSocketClient(server.ws_url) as ws:
        assert ws.chat(session["id"], "Do you like tea?")[-1]["type"] == "done"
    assert arrived.wait(30), "the title was never requested"
    title_thread = next(t for t in threading.enumerate() if t.name == f"title-{session['id']}")
    threading.Timer(1.0, release.set).start()  # answered while the app is closing
    provider.shutdown_services(app)
    assert not title_thread.is_alive()
