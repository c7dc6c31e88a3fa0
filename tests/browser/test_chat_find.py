"""Finding things in the chat: search across the persona's sessions opens the conversation at the
message (even on an earlier page), export links, timestamps on messages, "jump to latest", and
the memory chip explaining itself."""
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.browser.support import open_page

pytestmark = pytest.mark.browser


def _session_with(page, server, app, contents: list[str], title: str) -> str:
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    page.request.patch(server.url + f"/api/sessions/{session['id']}", data={"title": title})
    conn = provider.get_db(app).conn()
    for i, text in enumerate(contents):
        add_message(conn, session["id"], "user" if i % 2 == 0 else "assistant", text)
    return session["id"]


def test_search_opens_the_conversation_at_an_early_message(page, server, app):
    old = _session_with(page, server, app, ["We spoke about the lighthouse on Hiddensee."]
                        + [f"filler message {i}" for i in range(229)], "The island")
    _session_with(page, server, app, ["Nothing to see here.", "Indeed."], "Other")
    open_page(page, server)
    expect(page.locator("#messages .msg")).to_have_count(2)

    page.fill("#search-input", "lighth hidden")
    results = page.locator("#search-results .search-result")
    expect(results).to_have_count(1)
    expect(results.first.locator("mark")).to_have_text(["lighthouse", "Hiddensee"])
    expect(results.first).to_contain_text("The island")
    results.first.click()

    found = page.locator("#messages .msg-found")
    expect(found).to_contain_text("lighthouse on Hiddensee")
    expect(found).to_be_focused()
    expect(found).to_be_in_viewport()
    assert f"session={old}" in page.url
    page.fill("#search-input", "")
    expect(page.locator("#session-list")).to_be_visible()


def test_export_links_download_the_open_conversation(page, server, app):
    sid = _session_with(page, server, app, ["Hello there", "Hi!"], "Greetings")
    open_page(page, server, f"/?persona=default&session={sid}")
    page.get_by_text("Export", exact=True).click()
    with page.expect_download() as info:
        page.get_by_role("link", name="Markdown (.md)").click()
    download = info.value
    assert download.suggested_filename == f"conversation-{sid}.md"
    text = Path(download.path()).read_text(encoding="utf-8")
    assert text.startswith("# Greetings") and "Hello there" in text
    with page.expect_download() as info:
        page.get_by_role("link", name="JSON (.json)").click()
    body = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert [m["content"] for m in body["messages"]] == ["Hello there", "Hi!"]


def test_messages_show_their_time_and_jump_to_latest_appears_when_scrolled_up(page, server, app):
    sid = _session_with(page, server, app, [f"line {i}\n" * 3 for i in range(30)], "Long")
    open_page(page, server, f"/?persona=default&session={sid}")
    first = page.locator("#messages .msg").first.locator("time.msg-time")
    expect(first).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
    assert first.get_attribute("title")
    jump = page.locator("#jump-latest")
    expect(jump).to_be_hidden()
    page.locator("#messages").evaluate("el => { el.scrollTop = 0; }")
    expect(jump).to_be_visible()
    jump.click()
    expect(page.locator("#messages .msg").last).to_be_in_viewport()
    expect(jump).to_be_hidden()


def test_memory_chip_explains_itself(page, server):
    open_page(page, server)
    link = page.locator("#memory-link")
    expect(link).to_have_attribute("title", re.compile("memory files .*Click to read"))
