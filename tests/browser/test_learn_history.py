""""Learn from this history" in the browser: on an imported conversation the dialog shows the
estimate (windows, tokens, cost), starts on confirmation, shows window k of N while the cortex
worker reads the windows against the Claude fake, and ends learned; or is cancelled mid-way with
the keyboard and leaves the memory as it was."""
import threading

import pytest
from playwright.sync_api import expect

from src.utils import provider
from tests.browser.support import open_page
from tests.cortex.learn_support import import_chat, window_replies
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


@pytest.fixture
def chat(app) -> dict:
    client = app.test_client()
    assert client.put("/api/settings", json={"context_limit": 4}).status_code == 200
    pid = client.post("/api/personas", json={"name": "Seraphina"}).get_json()["id"]
    return import_chat(client, pid)


def _worker(app) -> threading.Thread:
    thread = threading.Thread(target=provider.get_cortex_worker(app).run_pending,
                              name="test-worker")
    thread.start()
    return thread


def _open(page, server, chat) -> None:
    open_page(page, server, f"/?persona={chat['persona_id']}&session={chat['id']}")
    expect(page.locator("#learn-open")).to_be_visible()


def test_learning_shows_the_estimate_then_progress_then_the_result(page, server, app, chat,
                                                                   claude):
    gate = threading.Event()
    scripted = window_replies("- Robin woke in my glade.", "- Robin asked about the wards.")
    scripted[2] = replies.gated(scripted[2], gate)
    claude.enqueue(*scripted)
    _open(page, server, chat)
    page.click("#learn-open")
    estimate = page.locator("#learn-estimate")
    expect(estimate).to_contain_text("5 messages in 2 windows: about")
    expect(estimate).to_contain_text("Estimated cost: about $")
    page.click("#learn-go")
    status = page.locator("#learn-status")
    expect(status).to_have_text("Waiting for the memory worker…")
    worker = _worker(app)
    try:
        claude.wait_for_requests(3, timeout=30)  # window 1 read, window 2 held by the fake
        expect(status).to_have_text("Reading window 2 of 2…")
        expect(page.locator("#learn-progress")).to_have_attribute("value", "1")
    finally:
        gate.set()
        worker.join(10)
    expect(status).to_have_text("Learned from 2 windows; changed: memory.md.")
    expect(page.locator("#learn-stop")).to_be_hidden()
    expect(page.locator("#learn-close")).to_be_focused()
    memory = provider.get_cortex_service(app).read_file(chat["persona_id"], "memory.md")
    assert memory.startswith("- Robin asked about the wards.\n- Robin woke in my glade.\n")


def test_cancelling_with_the_keyboard_leaves_the_memory_as_it_was(page, server, app, chat,
                                                                  claude):
    cortex = provider.get_cortex_service(app)
    before = cortex.read_all(chat["persona_id"])
    gate = threading.Event()
    scripted = window_replies("- Robin woke in my glade.", "- Robin asked about the wards.")
    scripted[2] = replies.gated(scripted[2], gate)
    claude.enqueue(*scripted)
    _open(page, server, chat)
    page.focus("#learn-open")
    page.keyboard.press("Enter")
    expect(page.locator("#learn-go")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#learn-status")).to_have_text("Waiting for the memory worker…")
    worker = _worker(app)
    try:
        claude.wait_for_requests(3, timeout=30)  # window 1 read, window 2 held by the fake
        expect(page.locator("#learn-status")).to_have_text("Reading window 2 of 2…")
        expect(page.locator("#learn-stop")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#learn-status")).to_have_text("Cancelling after the current window…")
    finally:
        gate.set()
        worker.join(10)
    expect(page.locator("#learn-status")).to_have_text("Cancelled; the memory is unchanged.")
    assert cortex.read_all(chat["persona_id"]) == before
    page.keyboard.press("Escape")
    expect(page.locator("#learn-dialog")).to_be_hidden()
