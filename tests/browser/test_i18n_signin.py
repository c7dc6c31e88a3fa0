"""The sign-in page in the chosen language, in real Chromium (a browser that prefers English)."""
import json
import urllib.request

import pytest
from playwright.sync_api import expect

TOKEN = "pc-access-token-browser-i18n-9c3e71a4d5"

pytestmark = pytest.mark.browser


@pytest.fixture
def app_config(app_config):
    return {**app_config, "ACCESS_TOKEN": TOKEN}


def test_the_sign_in_page_and_its_error_in_german_after_choosing_german(page, server):
    request = urllib.request.Request(server.url + "/api/settings", method="PUT",
                                     data=json.dumps({"language": "de"}).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        assert json.load(response)["language"] == "de"
    page.goto(server.url + "/settings")
    assert page.locator("html").get_attribute("lang") == "de"
    expect(page.locator("#signin-form")).to_contain_text("durch ein Zugangstoken geschützt")
    page.get_by_label("Zugangstoken").fill("nicht-das-token")
    page.get_by_role("button", name="Anmelden").click()
    expect(page.get_by_role("alert")).to_have_text("Das ist nicht das Zugangstoken.")
    page.get_by_label("Zugangstoken").fill(TOKEN)
    page.get_by_role("button", name="Anmelden").click()
    page.wait_for_url(server.url + "/settings")
    expect(page.locator("h1")).to_have_text("Einstellungen")
