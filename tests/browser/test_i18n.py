"""The interface in German: by the browser's Accept-Language before anything is chosen, by the
language setting after, and back to English; chat, settings, an error and relative times."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import checked_page
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


def _relative(page, seconds_ago: float) -> str:
    """`formatRelative` of the page's own module (its language) for a time `seconds_ago`."""
    return page.evaluate("""async (ago) => {
        const dom = await import('/static/js/lib/dom.js');
        return dom.formatRelative(new Date(Date.now() - ago * 1000).toISOString());
    }""", seconds_ago)


def test_a_german_browser_sees_german_before_any_setting(browser, server):
    with checked_page(browser, locale="de-DE", viewport={"width": 1280, "height": 860}) as page:
        open_page(page, server)
        assert page.locator("html").get_attribute("lang") == "de"
        expect(page.locator("#new-session")).to_have_text("+ Neuer Chat")
        expect(page.locator("#composer-input")).to_have_attribute("placeholder", "Schreib eine Nachricht …")
        expect(page.locator("#sidebar-close")).to_have_attribute("aria-label", "Seitenleiste schließen")
        expect(page.locator(".empty-intro")).to_have_text("Antworte, um das Gespräch zu beginnen.")
        assert _relative(page, 47 * 60) == "vor 47 Minuten"

        open_page(page, server, "/settings")
        expect(page.locator("h1")).to_have_text("Einstellungen")
        expect(page.locator("#set-language")).to_have_value("de")
        expect(page.locator("#help-language")).to_contain_text("Noch nicht gewählt")
        assert page.request.get(server.url + "/api/settings").json()["language"] == "en"


def test_choosing_german_then_english_switches_the_whole_interface(page, server, model):
    model.chat.extend([replies.overloaded(), replies.text("Da bin ich wieder.")])
    open_page(page, server, "/settings")
    expect(page.locator("h1")).to_have_text("Settings")
    expect(page.locator("#help-language")).to_contain_text("interface and prompts")
    page.select_option("#set-language", "de")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("h1")).to_have_text("Einstellungen")          # reloaded in German
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#help-language")).to_contain_text("Oberfläche und Prompts")
    expect(page.get_by_role("button", name="Einstellungen speichern")).to_be_visible()
    expect(page.locator("#key-status")).to_contain_text("Eingerichtet")
    page.get_by_role("button", name="Neue Persona").click()
    page.get_by_role("button", name="Persona anlegen").click()
    expect(page.locator("#persona-error")).to_have_text("Gib der Persona einen Namen.")
    assert page.request.get(server.url + "/api/settings").json()["language"] == "de"

    open_page(page, server)
    expect(page.locator("#send")).to_have_text("Senden")
    send(page, "Bist du da?")
    error = page.locator("#messages .msg-error")
    expect(error).to_contain_text("Claude ist gerade überlastet")    # the server's code, in German
    error.get_by_role("button", name="Erneut versuchen").click()
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator("#messages [data-action=regenerate]")).to_have_text("Neu erzeugen")
    # the session's own time, in German: "gerade eben" unless a slow machine took 45 s to here
    expect(page.locator("#session-list .session-time").first).to_have_text(
        re.compile(r"gerade eben|vor \d+ Minuten?"))
    assert [_relative(page, s) for s in (10, 2 * 3600, 3 * 86400)] == [
        "gerade eben", "vor 2 Stunden", "vor 3 Tagen"]

    open_page(page, server, "/settings")
    page.select_option("#set-language", "en")
    page.get_by_role("button", name="Einstellungen speichern").click()
    expect(page.locator("h1")).to_have_text("Settings")
    open_page(page, server)
    assert page.locator("html").get_attribute("lang") == "en"
    expect(page.locator("#new-session")).to_have_text("+ New chat")
    expect(page.locator("#session-list .session-time").first).to_have_text(
        re.compile(r"just now|\d+ minutes? ago"))
    assert _relative(page, 2 * 3600) == "2 hours ago"
