"""At 375 px the sidebar folds away behind a button and both pages stay usable; screenshots of
each page are kept in test-artifacts/."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import REPLY_DONE, open_page
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


def _no_horizontal_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


def test_chat_at_375px_with_the_sidebar_behind_a_button(phone, server, model, artifacts):
    model.chat.append(replies.text("Hello! **Nice** to meet you on a small screen."))
    open_page(phone, server)
    sidebar = phone.locator("#sidebar")
    expect(sidebar).not_to_be_in_viewport()
    phone.fill("#composer-input", "Hi from my phone")
    phone.get_by_role("button", name="Send").tap()
    phone.wait_for_selector(REPLY_DONE)
    _no_horizontal_scroll(phone)
    phone.screenshot(path=artifacts / "chat-375.png")

    toggle = phone.get_by_role("button", name="Open sidebar")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(sidebar).to_be_in_viewport(ratio=1)
    expect(toggle).to_have_attribute("aria-expanded", "true")
    phone.screenshot(path=artifacts / "chat-375-sidebar.png")
    phone.keyboard.press("Escape")
    expect(sidebar).not_to_be_in_viewport()
    expect(toggle).to_be_focused()


def test_settings_at_375px(phone, server, artifacts):
    open_page(phone, server, "/settings")
    expect(phone.locator("#cortex-text")).not_to_have_value("")
    _no_horizontal_scroll(phone)
    phone.screenshot(path=artifacts / "settings-375.png", full_page=True)
    phone.evaluate("document.getElementById('memory').scrollIntoView()")
    phone.screenshot(path=artifacts / "cortex-editor-375.png")
