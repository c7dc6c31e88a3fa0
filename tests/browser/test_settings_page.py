"""The general part of the settings page: the API key, model and conversation settings, and
personas (create, edit, delete after a confirmation)."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import API_KEY
from tests.browser.support import open_page

pytestmark = pytest.mark.browser


def test_settings_are_saved_and_bad_values_explained(page, server):
    open_page(page, server, "/settings")
    expect(page.locator("#set-model")).to_have_value("claude-sonnet-5-5")
    page.fill("#set-context-limit", "2")
    page.click("#app-settings button[type=submit]")
    expect(page.locator("#app-error")).to_have_text("Context limit must be a whole number from 4 to 400.")
    expect(page.locator("#set-context-limit")).to_have_attribute("aria-invalid", "true")

    page.fill("#set-context-limit", "24")
    page.select_option("#set-effort", "high")
    page.select_option("#set-language", "de")
    page.fill("#set-user-name", "Jonas")
    page.click("#app-settings button[type=submit]")
    expect(page.locator("html")).to_have_attribute("lang", "de")   # reloaded in the new language
    saved = page.request.get(server.url + "/api/settings").json()
    assert (saved["context_limit"], saved["effort"], saved["language"], saved["user_name"]) == (
        24, "high", "de", "Jonas")


def test_api_key_replace_and_remove_show_only_the_last_four(page, server, model):
    open_page(page, server, "/settings")
    expect(page.locator("#key-status")).to_contain_text(f"…{API_KEY[-4:]}")
    expect(page.locator("#key-remove")).to_be_hidden()
    page.fill("#key-input", "sk-ant-not-the-right-one-9999")
    page.click("#key-submit")
    expect(page.locator("#key-error")).to_contain_text("not accepted")

    page.fill("#key-input", API_KEY)
    page.click("#key-submit")
    expect(page.locator("#key-status")).not_to_contain_text("ANTHROPIC_API_KEY")
    expect(page.locator("#key-error")).to_be_hidden()
    expect(page.locator("#key-remove")).to_be_visible()
    assert API_KEY not in page.content()
    page.click("#key-remove")
    page.locator("#confirm-dialog").get_by_role("button", name="Remove").click()
    expect(page.locator("#key-status")).to_contain_text("from ANTHROPIC_API_KEY")
    expect(page.locator("#key-remove")).to_be_hidden()
    status = page.request.get(server.url + "/api/settings").json()["api_key"]
    assert status["source"] == "environment"


def test_create_edit_and_delete_a_persona(page, server):
    open_page(page, server, "/settings")
    page.click("#persona-new")
    page.fill("#p-name", "Theo Brandt")
    page.fill("#p-description", "A mountain guide.")
    page.select_option("#p-language", "de")
    page.click("#persona-save")
    card = page.locator(".persona-card", has_text="Theo Brandt")
    expect(card).to_contain_text("A mountain guide.")
    expect(page.locator("#cortex-persona option")).to_have_count(2)

    card.get_by_role("button", name="Edit Theo Brandt").click()
    expect(page.locator("#p-name")).to_have_value("Theo Brandt")
    page.fill("#p-description", "A mountain guide from the Allgäu.")
    page.click("#persona-save")
    expect(card).to_contain_text("from the Allgäu")

    card.get_by_role("button", name="Delete Theo Brandt").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Cancel").click()
    expect(card).to_be_visible()
    card.get_by_role("button", name="Delete Theo Brandt").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete persona").click()
    expect(page.locator(".persona-card")).to_have_count(1)
    expect(page.get_by_role("button", name="Delete Mira")).to_have_count(0)
    names = [p["name"] for p in page.request.get(server.url + "/api/personas").json()["personas"]]
    assert names == ["Mira"]
