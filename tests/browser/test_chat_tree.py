"""Branches, alternatives, continue, resume after a reload, and a failed reply after a reload."""
import re
import threading

import pytest
from playwright.sync_api import expect

from tests.browser.support import LAST_REPLY, REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser
WORDS = [f"word{i} " for i in range(30)]
FULL = "".join(WORDS)


def _texts(page, role: str) -> list[str]:
    return page.locator(f"#messages .msg-{role} .msg-body").all_inner_texts()


def test_edit_branches_switch_and_reload_and_the_prompt_holds_the_active_branch(page, server,
                                                                               model):
    model.chat.extend([replies.text("Lovely, a cat!"), replies.text("A dog, how nice!"),
                       replies.text("Old cats are the best.")])
    open_page(page, server)
    send(page, "I have a cat.")
    page.wait_for_selector(REPLY_DONE)
    page.click("#messages .msg-user [data-action=edit]")
    page.fill("#messages .edit-input", "I have a dog.")
    page.click("#messages .edit-form button[type=submit]")
    expect(page.locator(LAST_REPLY)).to_contain_text("A dog, how nice!")
    page.wait_for_selector(REPLY_DONE)
    nav = page.locator("#messages .msg-user .sibling-nav")
    expect(nav.locator(".sibling-count")).to_have_text("2/2")

    nav.get_by_role("button", name="Previous alternative").click()
    expect(page.locator("#messages .msg-user .sibling-count")).to_have_text("1/2")
    expect(page.locator(LAST_REPLY)).to_contain_text("Lovely, a cat!")
    page.reload()
    expect(page.locator("#messages .msg-user .sibling-count")).to_have_text("1/2")
    assert _texts(page, "user") == ["I have a cat."]

    send(page, "She is old.")
    expect(page.locator(LAST_REPLY)).to_contain_text("Old cats are the best.")
    turns = [(m["role"], m["content"]) for m in model.chat_bodies[-1]["messages"]]
    assert turns == [("user", "I have a cat."), ("assistant", "Lovely, a cat!"),
                     ("user", "She is old.")]


def test_regenerating_an_earlier_reply_keeps_the_old_one_as_an_alternative(page, server, model):
    model.chat.extend([replies.text("First answer."), replies.text("Second answer."),
                       replies.text("Another first answer.")])
    open_page(page, server)
    send(page, "one")
    page.wait_for_selector(REPLY_DONE)
    send(page, "two")
    expect(page.locator(LAST_REPLY)).to_contain_text("Second answer.")
    page.wait_for_selector(REPLY_DONE)
    page.locator("#messages .msg-assistant").first.locator("[data-action=regenerate]").click()
    expect(page.locator(LAST_REPLY)).to_contain_text("Another first answer.")
    expect(page.locator("#messages .msg-assistant .sibling-count")).to_have_text("2/2")
    assert _texts(page, "user") == ["one"]
    assert [m["content"] for m in model.chat_bodies[-1]["messages"]] == ["one"]
    page.get_by_role("button", name="Previous alternative").click()
    expect(page.locator("#messages .msg-user")).to_have_count(2)
    expect(page.locator(LAST_REPLY)).to_contain_text("Second answer.")


def test_a_reload_mid_reply_resumes_it_with_nothing_duplicated(page, server, model):
    gate = threading.Event()
    model.chat.append(replies.gated(replies.text(FULL, chunks=WORDS), gate))
    open_page(page, server)
    send(page, "Tell me a long story")
    expect(page.locator(LAST_REPLY)).to_contain_text("word0")
    page.reload()
    expect(page.locator(LAST_REPLY)).to_contain_text("word0")
    gate.set()
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(f"{LAST_REPLY} .msg-body")).to_have_text(FULL.strip())
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)
    expect(page.locator("#messages .msg-user")).to_have_count(1)


def test_reloads_while_chunks_keep_arriving_lose_and_repeat_nothing(page, server, model):
    """No gate: the reply keeps streaming while the page reloads twice, so the text-so-far snapshot
    and the live chunks race at whatever offset the reload lands on."""
    words = [f"w{i} " for i in range(120)]
    model.chat.append(replies.text("".join(words), chunks=words, event_delay=0.015))
    open_page(page, server)
    send(page, "Tell me a long story")
    for mark in ("w10 ", "w40 "):
        expect(page.locator(LAST_REPLY)).to_contain_text(mark)
        page.reload()
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(f"{LAST_REPLY} .msg-body")).to_have_text("".join(words).strip())
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)


def test_continue_extends_an_incomplete_reply(page, server, model):
    gate = threading.Event()
    model.chat.extend([replies.gated(replies.text("Once upon a time", chunks=[
        "Once upon", " a time"]), gate), replies.text(" there was a fox.")])
    open_page(page, server)
    send(page, "Tell me a story")
    expect(page.locator(LAST_REPLY)).to_contain_text("Once upon")
    page.click("#stop")
    page.wait_for_selector(f"{LAST_REPLY} [data-action=continue]")
    gate.set()
    page.click(f"{LAST_REPLY} [data-action=continue]")
    expect(page.locator(f"{LAST_REPLY} .msg-body")).to_have_text(
        "Once upon there was a fox.")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(f"{LAST_REPLY} [data-action=continue]")).to_have_count(0)
    assert model.chat_bodies[-1]["messages"][-1] == {"role": "assistant", "content": "Once upon"}


def test_a_failed_reply_shows_its_error_and_retry_after_a_reload(page, server, model):
    model.chat.extend([replies.overloaded(), replies.text("Here I am again.")])
    open_page(page, server)
    send(page, "Are you there?")
    expect(page.locator("#messages .msg-error")).to_be_visible()
    page.reload()
    error = page.locator("#messages .msg-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text(re.compile("overloaded", re.IGNORECASE))
    error.get_by_role("button", name="Retry").click()
    expect(page.locator(LAST_REPLY)).to_contain_text("Here I am again.")
    expect(page.locator("#messages .msg-error")).to_have_count(0)
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)
