"""The cortex editor on the settings page: edit and save with If-Match, reset, and the history with its diff and restore."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import open_page

pytestmark = pytest.mark.browser

FILE_URL = "/api/personas/default/cortex/memory.md"


def _put(page, server, content: str) -> dict:
    current = page.request.get(server.url + FILE_URL)
    response = page.request.put(server.url + FILE_URL, data={"content": content},
                                headers={"If-Match": current.headers["etag"]})
    assert response.ok, response.text()
    return response.json()


def test_edit_memory_with_preview_meter_and_save(page, server):
    open_page(page, server, "/settings")
    expect(page.get_by_role("tab", name="Memory")).to_have_attribute("aria-selected", "true")
    text = "# Memories\n\n- Jonas likes **green tea**.\n"
    page.fill("#cortex-text", text)
    expect(page.locator("#cortex-count")).to_have_text(f"{len(text)} / 12,000 characters")
    expect(page.get_by_role("tab", name="Memory").locator(".dirty-dot")).to_be_visible()
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#cortex-preview strong")).to_have_text("green tea")
    expect(page.locator("#cortex-text")).to_be_hidden()

    page.get_by_role("button", name="Write").click()
    page.click("#cortex-save")
    expect(page.locator("#cortex-status")).to_contain_text("Saved as version #")
    expect(page.locator("#cortex-save")).to_be_disabled()
    assert page.request.get(server.url + FILE_URL).json()["content"] == text
    expect(page.locator("#history-list .history-item").first).to_contain_text("You")

    page.get_by_role("tab", name="Memory").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Soul")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#history-heading")).to_have_text("History of soul.md")


def test_history_diff_and_restore(page, server):
    original = page.request.get(server.url + FILE_URL).json()
    _put(page, server, original["content"] + "- Likes <b>bold</b> tea.\n")
    open_page(page, server, "/settings?persona=default&file=memory.md&view=history")

    expect(page.locator("#diff .diff-add")).to_have_text("- Likes <b>bold</b> tea.")
    expect(page.locator("#diff")).to_be_focused()
    expect(page.locator("#diff-title")).to_have_text("Version #2 of memory.md against #1")
    assert page.locator("#diff b").count() == 0
    expect(page.locator("#diff-meta")).to_contain_text("You")
    items = page.locator("#history-list .history-item")
    expect(items).to_have_count(2)
    items.nth(1).click()
    expect(page.locator("#diff-title")).to_have_text("Version #1 of memory.md (first version)")
    page.get_by_role("button", name="Restore #1").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Restore").click()

    expect(items).to_have_count(3)
    expect(items.first).to_contain_text("Restore")
    expect(page.locator("#diff .diff-del")).to_have_text("- Likes <b>bold</b> tea.")
    expect(items.first.locator(".history-rev")).to_have_text("#3")
    expect(page.locator("#cortex-text")).to_have_value(original["content"])
    assert page.request.get(server.url + FILE_URL).json()["content"] == original["content"]


def test_reset_to_template(page, server):
    original = page.request.get(server.url + FILE_URL).json()
    _put(page, server, "# Something else\n")
    open_page(page, server, "/settings")
    expect(page.locator("#cortex-text")).to_have_value("# Something else\n")
    page.click("#cortex-reset")
    page.locator("#confirm-dialog").get_by_role("button", name="Reset").click()
    expect(page.locator("#cortex-text")).to_have_value(original["content"])
    expect(page.locator("#history-list .history-item").first).to_contain_text("Template")


def test_the_preview_marks_pinned_lines_instead_of_showing_their_markers(page, server):
    open_page(page, server, "/settings")
    text = ("# Memories\n\n<!-- pin -->\n## Health\n- Jonas is **allergic** to nuts.\n"
            "- <img src=x onerror=alert(1)> stays text.\n<!-- /pin -->\n\n- Likes tea.\n"
            "<!-- pin --> Loves Bremen. <!-- /pin -->\n<!-- pinn --> not a pin.\n")
    page.fill("#cortex-text", text)
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#cortex-preview")
    blocks = preview.locator(".pinned-block")
    expect(blocks).to_have_count(2)
    expect(blocks.first.locator(".pinned-label")).to_have_text("Pinned")
    expect(blocks.first.locator("h2")).to_have_text("Health")
    expect(blocks.first.locator("strong")).to_have_text("allergic")
    expect(blocks.first).to_contain_text("<img src=x onerror=alert(1)> stays text.")
    expect(blocks.last).to_contain_text("Loves Bremen.")
    expect(preview.locator("img")).to_have_count(0)
    expect(preview).not_to_contain_text("<!-- pin -->")
    expect(preview).not_to_contain_text("<!-- /pin -->")
    expect(preview).to_contain_text("<!-- pinn --> not a pin.")
    expect(preview.locator(":scope > ul li")).to_have_text(["Likes tea."])


def test_a_history_reload_that_fails_after_a_save_is_told_not_thrown(page, server):
    """The save went through; the history reload after it got no answer (cut off in the
    browser): the person is told, and no unhandled rejection reaches the page (the page fixture
    fails the test on any page error)."""
    open_page(page, server, "/settings")
    text = "# Memories\n\n- Jonas likes green tea.\n"
    page.fill("#cortex-text", text)
    page.route("**/cortex/memory.md/history", lambda route: route.abort())
    page.click("#cortex-save")
    expect(page.locator("#cortex-status")).to_contain_text("Saved as version #")
    expect(page.locator("#toast.toast-error")).to_have_text(
        "The server could not be reached. Check that it is running.")
    assert page.request.get(server.url + FILE_URL).json()["content"] == text
