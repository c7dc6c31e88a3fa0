"""The settings page explains itself: limits come from the server (`GET /api/limits`) so the
browser never accepts what the API refuses, errors name fields in words, global memory settings
are visibly apart from one persona's memory, settings carry help texts, and the key card says
where to get a key."""
import pytest
from playwright.sync_api import expect

from src.utils import limits
from tests.browser.support import open_page

pytestmark = pytest.mark.browser


def test_limits_are_served_from_the_one_source(client):
    data = client.get("/api/limits").get_json()
    assert data["persona"]["name"] == {"min_length": 1, "max_length": limits.PERSONA_TEXT["name"]}
    assert data["settings"]["context_limit"] == {"min": 4, "max": 400}
    assert data["cortex_settings"]["idle_minutes"] == {"min": 1, "max": 1440}
    too_long = client.post("/api/personas", json={"name": "x" * (limits.PERSONA_TEXT["name"] + 1)})
    assert too_long.status_code == 400


def test_form_limits_match_the_server(page, server):
    served = page.request.get(server.url + "/api/limits").json()
    open_page(page, server, "/settings")
    expect(page.locator("#p-name")).to_have_attribute(
        "maxlength", str(served["persona"]["name"]["max_length"]))
    expect(page.locator("#p-user-name")).to_have_attribute(
        "maxlength", str(served["persona"]["user_name"]["max_length"]))
    expect(page.locator("#set-context-limit")).to_have_attribute(
        "min", str(served["settings"]["context_limit"]["min"]))
    expect(page.locator("#cx-idle")).to_have_attribute(
        "max", str(served["cortex_settings"]["idle_minutes"]["max"]))
    expect(page.locator("#wb-scan-depth")).to_have_attribute(
        "max", str(served["world"]["scan_depth"]["max"]))
    expect(page.locator("#wb-budget")).to_have_attribute(
        "min", str(served["world"]["token_budget"]["min"]))


def test_out_of_range_values_are_explained_in_words_before_sending(page, server):
    open_page(page, server, "/settings")
    puts = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)
    page.fill("#cx-idle", "0")
    page.locator("#cortex-settings").get_by_role("button", name="Save").click()
    expect(page.locator("#cx-error")).to_have_text(
        "Update after idle must be a whole number from 1 to 1440.")
    expect(page.locator("#cx-idle")).to_be_focused()
    page.fill("#set-max-tokens", "2.5")
    page.click("#app-settings button[type=submit]")
    expect(page.locator("#app-error")).to_have_text(
        "Max tokens per reply must be a whole number from 1 to 64000.")
    assert puts == []


def test_global_and_per_persona_memory_settings_are_apart(page, server):
    open_page(page, server, "/settings")
    global_card = page.locator("#cortex-settings")
    expect(global_card.get_by_role("heading", name="Memory updates")).to_be_visible()
    expect(global_card).to_contain_text("All personas")
    expect(global_card.locator("#cortex-persona")).to_have_count(0)
    expect(global_card.locator("#cortex-update")).to_have_count(0)
    persona_card = page.locator(".persona-memory")
    expect(persona_card).to_contain_text("Per persona")
    expect(persona_card.get_by_label("Persona")).to_be_visible()
    expect(persona_card.get_by_role("button", name="Update now")).to_be_visible()
    box = global_card.bounding_box()
    assert box["y"] + box["height"] <= persona_card.bounding_box()["y"]


@pytest.mark.parametrize("control, words", [
    ("#set-context-limit", "recent messages"),
    ("#set-effort", "thinks before it answers"),
    ("#cx-frequency", "share of the context limit"),
    ("#cx-idle", "left quiet this long"),
])
def test_settings_have_help_texts(page, server, control, words):
    open_page(page, server, "/settings")
    expect(page.locator(control)).to_have_accessible_description(__import__("re").compile(words))


def test_the_key_card_links_to_where_keys_come_from(page, server):
    open_page(page, server, "/settings")
    link = page.get_by_role("link", name="Anthropic Console")
    expect(link).to_have_attribute("href", "https://console.anthropic.com/settings/keys")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
