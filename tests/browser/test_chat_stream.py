"""Chat replies stream into their bubble over the WebSocket; stop, regenerate, edit and retry."""
import threading

import pytest
from playwright.sync_api import expect

from tests.browser.support import LAST_REPLY, REPLY_DONE, last_user_text, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

RECORD_STATES = """() => {
  window.__states = [];
  const list = document.getElementById('messages');
  new MutationObserver(() => {
    const body = list.querySelector('.msg-streaming .msg-body');
    const text = body ? body.textContent : null;
    if (text && window.__states.at(-1) !== text) window.__states.push(text);
  }).observe(list, { childList: true, subtree: true, characterData: true });
}"""


def test_reply_streams_through_several_states_before_done(page, server, model):
    gate = threading.Event()
    chunks = ["Once ", "upon ", "a ", "time ", "there ", "was ", "a ", "**cat** ", "named ",
              "Pixel."]
    model.chat.append(replies.gated(replies.text("".join(chunks), chunks=chunks,
                                                 event_delay=0.03), gate))
    open_page(page, server)
    page.evaluate(RECORD_STATES)

    send(page, "Tell me a story")
    expect(page.locator("#messages .msg-user .msg-body")).to_have_text("Tell me a story")
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator("#messages")).to_have_attribute("aria-busy", "true")
    expect(page.locator(LAST_REPLY + " .msg-body")).to_have_text("Once")
    gate.set()
    page.wait_for_selector(REPLY_DONE)

    final = "Once upon a time there was a cat named Pixel."
    expect(page.locator(LAST_REPLY + " .msg-body")).to_have_text(final)
    expect(page.locator(LAST_REPLY + " strong")).to_have_text("cat")
    states = page.evaluate("window.__states")
    partial = [s for s in states if s and s != final and final.startswith(s.strip())]
    assert len(partial) >= 2, states
    expect(page.locator("#messages")).not_to_have_attribute("aria-busy", "true")
    expect(page.locator("#send")).to_be_visible()
    expect(page.locator("#memory-label")).to_have_text("Memory 7%")
    assert last_user_text(model.chat_bodies[0]) == "Tell me a story"


def test_stop_keeps_the_partial_reply_marked_incomplete(page, server, claude, model):
    gate = threading.Event()
    model.chat.append(replies.gated(replies.text("Half of a very long answer."), gate))
    open_page(page, server)
    send(page, "Talk for a long time")
    expect(page.locator(LAST_REPLY + " .msg-body")).to_contain_text("Half")

    page.click("#stop")
    expect(page.locator(LAST_REPLY + " .badge-incomplete")).to_have_text("Incomplete")
    assert claude.wait_for_disconnect()
    gate.set()
    expect(page.locator("#send")).to_be_visible()
    expect(page.locator(LAST_REPLY)).to_have_class("msg msg-assistant msg-incomplete")
    session_id = page.evaluate("new URLSearchParams(location.search).get('session')")
    stored = page.request.get(f"{server.url}/api/sessions/{session_id}").json()["messages"]
    assert [(m["role"], m["status"]) for m in stored] == [("user", "complete"),
                                                         ("assistant", "incomplete")]
    assert stored[1]["content"].startswith("Half")


def test_regenerate_replaces_the_last_reply(page, server, model):
    model.chat.extend([replies.text("The first answer."), replies.text("A better answer.")])
    open_page(page, server)
    page.fill("#composer-input", "First line")
    page.press("#composer-input", "Shift+Enter")
    page.type("#composer-input", "second line")
    expect(page.locator("#composer-input")).to_have_value("First line\nsecond line")
    page.press("#composer-input", "Enter")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(LAST_REPLY)).to_contain_text("The first answer.")
    expect(page.locator("#composer-input")).to_have_value("")

    page.click(REPLY_DONE)
    expect(page.locator(LAST_REPLY)).to_contain_text("A better answer.")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)
    assert [m["role"] for m in model.chat_bodies[1]["messages"]] == ["user"]
    assert last_user_text(model.chat_bodies[1]) == "First line\nsecond line"


def test_edit_last_message_and_get_a_new_reply(page, server, model):
    model.chat.extend([replies.text("Paris is lovely."), replies.text("Rome is lovely.")])
    open_page(page, server)
    send(page, "Tell me about Paris")
    page.wait_for_selector(REPLY_DONE)

    page.click("#messages .msg-user [data-action=edit]")
    page.fill("#messages .edit-input", "Tell me about Rome")
    page.click("#messages .edit-form button[type=submit]")
    expect(page.locator(LAST_REPLY)).to_contain_text("Rome is lovely.")
    expect(page.locator("#messages .msg-user .msg-body")).to_have_text("Tell me about Rome")
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)
    assert last_user_text(model.chat_bodies[1]) == "Tell me about Rome"


def test_upstream_error_is_shown_in_place_and_retry_answers(page, server, model):
    model.chat.extend([replies.overloaded(), replies.text("Here I am again.")])
    open_page(page, server)
    send(page, "Are you there?")
    error = page.locator("#messages .msg-error")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("role", "alert")
    expect(page.locator("#messages .msg-user .msg-body")).to_have_text("Are you there?")

    error.get_by_role("button", name="Retry").click()
    expect(page.locator(LAST_REPLY)).to_contain_text("Here I am again.")
    expect(page.locator("#messages .msg-error")).to_have_count(0)
    expect(page.locator("#messages .msg-user")).to_have_count(1)


def test_message_refused_before_the_reply_keeps_the_typed_text(page, server, model):
    too_long = "x" * 32_001
    open_page(page, server)
    send(page, too_long)
    error = page.locator("#messages .msg-error")
    expect(error).to_contain_text("message")
    expect(page.locator("#composer-input")).to_have_value(too_long)
    expect(page.locator("#messages .msg-user")).to_have_class("msg msg-user msg-unsent")
    assert model.chat_bodies == []


def test_a_reply_cut_off_by_a_stream_error_is_marked_incomplete(page, server, model):
    partial = replies.text("Once upon a time there was a fox", chunks=[
        "Once upon", " a time", " there was", " a fox"])
    model.chat.append(replies.stream_error("api_error", "Internal", after_events=6, base=partial))
    open_page(page, server)
    send(page, "Tell me a story")
    error = page.locator("#messages .msg-error")
    expect(error).to_be_visible()
    reply = page.locator("#messages .msg-assistant").last
    expect(reply.locator(".msg-body")).to_contain_text("Once upon")
    expect(reply.locator(".badge-incomplete")).to_have_text("Incomplete")
    expect(reply).to_have_class("msg msg-assistant msg-incomplete")

    page.reload()
    expect(error).to_be_visible()
    expect(reply.locator(".msg-body")).to_contain_text("Once upon")
    expect(reply.locator(".badge-incomplete")).to_have_text("Incomplete")
