"""Memory true to the conversation, seen from the browser (issue 15): a reply shows the memory it
was written with; deleting the message a fact came from makes the indicator report the
reconciliation, and the history shows the revert linked to the retracted messages."""
import re

import pytest
from playwright.sync_api import expect

from src.utils import provider
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser
PIXEL = "- Jonas has a cat named Pixel.\n"


def _memory(page, server) -> dict:
    return page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()


def test_deleting_a_message_reconciles_memory_and_the_history_links_it(page, server, app, model,
                                                                       artifacts):
    model.chat.extend([replies.text("A cat! How lovely."), replies.text("Pixel is a fine name.")])
    open_page(page, server)
    send(page, "I adopted a cat named Pixel")
    page.wait_for_selector(REPLY_DONE)
    before = _memory(page, server)
    model.update.extend([replies.tool_use([("write_file", {"filename": "memory.md",
                                                           "content": before["content"] + PIXEL})]),
                         replies.text("Noted Pixel.")])
    provider.get_cortex_trigger(app).request_update("default")
    provider.get_cortex_worker(app).run_pending()
    learned = _memory(page, server)["revision"]
    send(page, "Her name is Pixel, really")
    page.wait_for_selector("#messages .msg-assistant:nth-of-type(2) [data-action=regenerate]")

    used = page.locator("#messages .msg-assistant").last.locator(".msg-memory")
    used.locator("summary").click()  # opened, the links are numbered as the history numbers them
    link = used.get_by_role("link", name="memory.md #2")  # the template was #1
    expect(link).to_have_attribute("href", f"/settings?persona=default&file=memory.md"
                                           f"&rev={learned}&view=history#memory")
    first = page.locator("#messages .msg-assistant").first.locator(".msg-memory")
    first.locator("summary").click()
    expect(first.locator("a").first).to_have_text("memory.md #1")
    expect(first.locator("a").first).to_have_attribute(
        "href", re.compile(rf"&rev={before['revision']}&"))
    page.screenshot(path=artifacts / "memory-used.png")

    open_page(page, server, "/settings?persona=default&file=memory.md&view=history")
    learned_from = page.locator("#history-list li").first.locator("a.history-source")
    expect(learned_from).to_have_text("From messages 1–2")
    learned_from.click()
    page.wait_for_url("**/?persona=default&session=*&message=1")
    expect(page.locator("#messages .msg-found")).to_have_attribute("data-id", "1")

    page.locator("#messages .msg-user").last.locator("[data-action=delete]").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#messages .msg-user")).to_have_count(1)
    indicator = page.locator("#memory")
    expect(indicator).to_have_attribute("data-state", "idle")
    assert provider.get_cortex_worker(app).run_pending() == [], "the second exchange was unprocessed"

    page.locator("#messages .msg-user").last.locator("[data-action=delete]").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("#messages .msg-user")).to_have_count(0)
    expect(indicator).to_have_attribute("data-state", "running")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [(j.status, j.reason) for j in finished] == [("done", "reconcile")]
    expect(indicator).to_have_attribute("data-state", "reconciled")
    expect(page.locator("#memory-label")).to_have_text("Memory reconciled · see changes")
    assert _memory(page, server)["content"] == before["content"]
    page.screenshot(path=artifacts / "memory-reconciled.png")

    page.locator("#memory-link").click()
    page.wait_for_url("**/settings?**")
    latest = page.locator("#history-list li").first
    expect(latest).to_contain_text("reverted: message deleted")
    source = latest.locator("a.history-source")
    expect(source).to_contain_text("Retracted messages")
    href = source.get_attribute("href")
    assert href.startswith("/?persona=default&session=") and "&message=" in href
    expect(page.locator("#diff-meta")).to_contain_text("undoes #")
    page.locator(".history-layout").screenshot(path=artifacts / "memory-reconciled-history.png")
