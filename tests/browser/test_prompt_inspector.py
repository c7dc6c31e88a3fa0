"""The prompt inspector in the browser (docs/prompt-inspector.md): SillyTavern's Seraphina card
with its lorebook, a chat message naming a key, then the reply's Prompt action shows the
sections with token counts and the fired world info entry; "Memory used" opens it at the cortex
files; the context meter under the message box shows the last request against the window."""
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.support import LAST_REPLY, REPLY_DONE, open_page, send
from tests.browser.test_world_info import _import
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_inspector_shows_the_fired_entry_and_token_counts(page, server, model, claude,
                                                              artifacts):
    persona = _import(page, server)
    open_page(page, server, f"/?persona={persona['id']}")
    model.chat.append(replies.text("The forest is my home."))
    send(page, "What is this forest?")
    page.wait_for_selector(REPLY_DONE)
    meter = page.locator("#context-meter")
    expect(meter).to_be_visible()
    expect(meter).to_contain_text("of 200,000 tokens")
    action = page.locator(f"{LAST_REPLY} [data-action=prompt]")
    action.focus()
    page.keyboard.press("Enter")  # keyboard alone: Enter opens, Escape closes, focus comes back
    dialog = page.locator("#prompt-dialog")
    expect(dialog).to_be_visible()
    sections = dialog.locator(".prompt-section")
    expect(sections.first).to_be_visible()
    titles = sections.locator(".prompt-section-title").all_inner_texts()
    assert titles == ["Persona", "memory.md", "soul.md", "relationship.md", "World info",
                      "Date and time", "Your message"]
    world = dialog.locator(".prompt-section[data-kind=world]")
    expect(world.locator(".prompt-tokens")).to_have_text(re.compile(r"^\d[\d,]* tokens$"))
    world.locator("summary").click()
    expect(world.locator(".prompt-entries")).to_contain_text("key: forest")
    expect(world.locator(".prompt-text")).to_contain_text("Eldoria is here, all of the woods.")
    expect(dialog.locator(".prompt-section[data-kind=persona] .badge-cached")).to_be_visible()
    expect(dialog.locator(".prompt-section[data-kind=message] .badge-cached")).to_have_count(0)
    expect(dialog.locator("#prompt-summary")).to_contain_text("claude-")
    expect(dialog.locator("#prompt-summary")).to_contain_text("read from cache")
    counted = [r for r in claude.requests if r.path == "/v1/messages/count_tokens"]
    assert counted, "the counts came from the provider"
    page.screenshot(path=str(artifacts / "prompt-inspector.png"))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(action).to_be_focused()

    page.locator(f"{LAST_REPLY} .msg-memory:not(.msg-world) summary").click()
    page.locator(f"{LAST_REPLY} .msg-memory-prompt").click()
    expect(dialog).to_be_visible()
    cortex = dialog.locator(".prompt-section[data-kind=cortex]")
    expect(cortex).to_have_count(3)
    for index in range(3):
        expect(cortex.nth(index)).to_have_attribute("open", "")
    expect(cortex.first.locator("summary")).to_be_focused()
    expect(cortex.first.locator(".prompt-text")).to_contain_text("<cortex_memory>")
    page.keyboard.press("Escape")

    meter.click()  # the meter opens the prompt of the last request
    expect(dialog.locator(".prompt-section").first).to_be_visible()


def test_on_a_phone_the_inspector_fits_the_screen(phone, server, model, artifacts):
    persona = phone.request.post(server.url + "/api/personas",
                                 data={"name": "Mira", "description": "A lighthouse keeper."}
                                 ).json()
    open_page(phone, server, f"/?persona={persona['id']}")
    model.chat.append(replies.text("The lamp is lit."))
    phone.fill("#composer-input", "Is the lamp lit?")
    phone.click("#send")
    phone.wait_for_selector(REPLY_DONE)
    expect(phone.locator("#context-meter")).to_be_visible()
    phone.click(f"{LAST_REPLY} [data-action=prompt]")
    dialog = phone.locator("#prompt-dialog")
    expect(dialog.locator(".prompt-section").first).to_be_visible()
    expect(dialog).to_be_in_viewport(ratio=0.95)
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
    dialog.locator(".prompt-section[data-kind=message] summary").click()
    expect(dialog.locator(".prompt-section[data-kind=message] .prompt-text")).to_have_text(
        "Is the lamp lit?")
    phone.screenshot(path=str(artifacts / "prompt-inspector-phone.png"))
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
