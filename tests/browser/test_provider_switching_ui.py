"""The settings page switches provider without carrying the other one's URL or model along, takes
its model suggestions from the chosen endpoint, and asks for the key of a new address instead of
moving the saved one (issues 20 and 21)."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import API_KEY
from tests.browser.support import open_page
from tests.fakes.openai_compat import replies
from tests.support.listener import Listener

pytestmark = pytest.mark.browser


def saved_settings(page, server) -> dict:
    return page.request.get(server.url + "/api/settings").json()


def saving(page):
    """Waits for the settings PUT the next action sends to be answered: the "Saved" note of an
    earlier save shows for 2.5 s, so seeing it proves nothing about the next one."""
    return page.expect_response(lambda response: response.url.endswith("/api/settings")
                                and response.request.method == "PUT")


def test_switching_back_and_forth_and_a_new_address(page, server, claude, openai_fake):
    openai_fake.default = replies.tool_use([("ping", {"word": "pong"})])
    open_page(page, server, "/settings")
    model = page.locator("#set-model")
    expect(model).to_have_value("claude-sonnet-5-5")
    # the Claude fake's own list (claude-haiku-5-5 is in no built-in list)
    expect(page.locator("#model-options option[value='claude-haiku-5-5']")).to_have_count(1)

    page.select_option("#set-provider", "openai_compatible")
    expect(model).to_have_value("")
    expect(page.locator("#model-options option[value^='claude-']")).to_have_count(0)
    page.fill("#set-base-url", openai_fake.url)
    page.click("#test-connection")
    expect(page.locator("#connection-report")).to_contain_text("Models: 3 found",
                                                               timeout=30_000)
    expect(model).to_have_value("gpt-4o-mini")  # the model it tested, which chats will use
    expect(page.locator("#model-options option[value='qwen2.5:7b']")).to_have_count(1)
    page.fill("#set-model", "qwen2.5:7b")
    with saving(page):
        page.click("#provider-form button[type=submit]")
    expect(page.locator("#provider-saved")).to_have_text("Saved")
    saved = saved_settings(page, server)
    assert (saved["provider"], saved["base_url"], saved["model"]) == (
        "openai_compatible", openai_fake.url, "qwen2.5:7b")

    page.select_option("#set-provider", "anthropic")
    expect(page.locator("#set-base-url")).to_have_value(claude.url)
    expect(model).to_have_value("claude-sonnet-5-5")
    with saving(page):
        page.click("#provider-form button[type=submit]")
    expect(page.locator("#provider-saved")).to_have_text("Saved")
    saved = saved_settings(page, server)
    assert (saved["provider"], saved["base_url"], saved["model"]) == (
        "anthropic", claude.url, "claude-sonnet-5-5")
    assert saved["api_key"]["configured"] is True

    with Listener() as listener:
        page.fill("#set-base-url", listener.url)
        page.click("#provider-form button[type=submit]")
        expect(page.locator("#provider-key-ask")).to_be_visible()
        expect(page.locator("#provider-key")).to_be_focused()
        assert saved_settings(page, server)["base_url"] == claude.url  # nothing moved yet
        with saving(page):
            page.click("#provider-key-none")
        expect(page.locator("#provider-saved")).to_have_text("Saved")
        expect(page.locator("#key-status")).to_contain_text("Not set")
        saved = saved_settings(page, server)
        assert saved["base_url"] == listener.url and saved["api_key"]["configured"] is False
        page.fill("#set-base-url", claude.url)
        page.click("#provider-form button[type=submit]")
        expect(page.locator("#provider-key-ask")).to_be_hidden()
        expect(page.locator("#key-status")).to_contain_text("Configured")
        assert listener.reached_with(API_KEY) == []
