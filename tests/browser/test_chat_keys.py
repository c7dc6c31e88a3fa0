"""Keyboard details of the chat: Esc while editing a message gives focus back to its Edit button,
and on touch screens Enter adds a line while the Send button sends."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import REPLY_DONE, last_user_text, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


def test_escape_in_message_editing_returns_focus_to_the_edit_button(page, server, model):
    model.chat.append(replies.text("Paris is lovely."))
    open_page(page, server)
    send(page, "Tell me about Paris")
    page.wait_for_selector(REPLY_DONE)

    page.click("#messages .msg-user [data-action=edit]")
    expect(page.locator("#messages .edit-input")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#messages .edit-input")).to_have_count(0)
    expect(page.locator("#messages .msg-user [data-action=edit]")).to_be_focused()


def test_on_a_touch_screen_enter_adds_a_line_and_send_sends(phone, server, model):
    model.chat.append(replies.text("Two lines received."))
    open_page(phone, server)
    box = phone.locator("#composer-input")
    box.click()
    box.press_sequentially("First line")
    box.press("Enter")
    box.press_sequentially("second line")
    expect(box).to_have_value("First line\nsecond line")
    expect(phone.locator("#messages .msg-user")).to_have_count(0)
    assert model.chat_bodies == []

    phone.get_by_role("button", name="Send").tap()
    phone.wait_for_selector(REPLY_DONE)
    assert last_user_text(model.chat_bodies[0]) == "First line\nsecond line"
    expect(box).to_have_attribute("enterkeyhint", "enter")
    expect(phone.locator("#composer-hint")).to_have_text("Enter adds a line · the Send button sends")


def test_on_a_desktop_enter_still_sends(page, server, model):
    model.chat.append(replies.text("One line received."))
    open_page(page, server)
    send(page, "Just one line")
    page.wait_for_selector(REPLY_DONE)
    assert last_user_text(model.chat_bodies[0]) == "Just one line"
