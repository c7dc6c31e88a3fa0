""""About you" in the browser (docs/about-you.md): a user persona made in Settings, picked in a
conversation's header, is who the persona talks to in the request the fake receives; the
German settings page shows the section translated."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import REPLY_DONE, open_page, send, system_text
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


def _add(page, name: str, description: str) -> None:
    page.click("#up-new")
    page.fill("#up-name", name)
    page.fill("#up-description", description)
    page.click("#up-save")
    expect(page.locator("#user-personas .persona-card", has_text=name)).to_be_visible()


def test_a_user_persona_made_in_settings_is_picked_in_a_conversation_and_used(page, server,
                                                                             model):
    open_page(page, server, "/settings#about-you")
    expect(page.locator("#up-empty")).to_be_visible()
    _add(page, "Alex", "Alex is a marine biologist.")
    first = page.locator("#user-personas .persona-card").first
    expect(first).to_contain_text("Default")
    expect(page.locator("#set-user-name")).to_have_value("Alex")
    _add(page, "Sam", "Sam restores old sailing boats in Kiel.")
    sam = page.locator("#user-personas .persona-card", has_text="Sam")
    expect(sam.get_by_role("button", name="Make Sam the default")).to_be_visible()

    open_page(page, server, "/")
    page.click("#new-session")
    picker = page.locator("#user-persona")
    expect(picker).to_be_visible()
    expect(picker.locator("option:checked")).to_have_text("Alex")
    picker.select_option(label="Sam")
    expect(page.locator(".toast").last).to_contain_text("now uses Sam")
    model.chat.append(replies.text("Ahoy, Sam!"))
    send(page, "The mast is fixed.")
    page.wait_for_selector(REPLY_DONE)
    sent = system_text(model.chat_bodies[-1])
    assert "in a conversation with Sam." in sent and "Sam restores old sailing boats" in sent
    assert "marine biologist" not in sent
    page.reload()
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator("#user-persona option:checked")).to_have_text("Sam")


def test_the_section_is_translated_in_german(page, server):
    page.request.put(server.url + "/api/settings", data={"language": "de"})
    open_page(page, server, "/settings")
    expect(page.locator("#about-you-heading")).to_have_text("Über dich")
    page.click("#up-new")
    expect(page.locator("label[for=up-name]")).to_have_text("Dein Name")
