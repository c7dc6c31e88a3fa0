"""Chat import in the browser: choose a SillyTavern .jsonl in the sidebar's import dialog, see its
counts, import it, and land in the new conversation with its swipes as alternatives."""
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.support import open_page

pytestmark = pytest.mark.browser
ST_CHAT = Path(__file__).parents[1] / "portability" / "files" / "sillytavern_chat.jsonl"


def test_a_sillytavern_chat_is_imported_and_opened_with_its_branches(page, server):
    open_page(page, server)
    page.click("#chat-import-open")
    expect(page.locator("#chat-import-dialog")).to_be_visible()
    page.set_input_files("#chat-import-file", str(ST_CHAT))
    expect(page.locator("#chat-import-summary")).to_contain_text(
        "5 messages and 2 alternatives, from 2024-06-06 to 2024-06-06.")
    expect(page.locator("#chat-import-summary")).to_contain_text("Speakers: Seraphina, Robin.")
    page.click("#chat-import-go")
    expect(page.locator("#chat-import-dialog")).to_be_hidden()
    expect(page.locator("#session-list [aria-current=true]")).to_contain_text(
        "Seraphina (2024-06-06)")
    bodies = page.locator("#messages .msg-body")
    expect(bodies).to_have_count(5)
    expect(page.locator("#messages .greeting")).to_have_count(0)  # it opens with its own
    expect(bodies.nth(2)).to_contain_text("In my glade, deep in Eldoria.")
    swipe = page.locator("#messages .msg-assistant").nth(1)
    expect(swipe.locator(".sibling-count")).to_have_text("2/3")
    swipe.get_by_role("button", name="Next alternative").click()
    expect(page.locator("#messages .msg-assistant").nth(1).locator(".sibling-count")) \
        .to_have_text("3/3")
    expect(page.locator("#messages .msg-body")).to_have_count(3)
    expect(page.locator("#messages .msg-body").nth(2)).to_contain_text(
        "Hush. You fell near the river.")


def test_a_file_that_is_no_chat_is_refused_in_the_dialog(page, server, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("this is not json\n", encoding="utf-8")
    open_page(page, server)
    page.click("#chat-import-open")
    page.set_input_files("#chat-import-file", str(bad))
    expect(page.locator("#chat-import-error")).to_contain_text("Line 1 is not valid JSON.")
    expect(page.locator("#chat-import-go")).to_be_disabled()
