"""Keyboard use: every focus indicator on the chat and settings pages is an outline that reaches
3:1 against what it covers, in light and dark, and stays visible in forced-colors mode; on a
phone the open drawer keeps the focus until Escape closes it and returns the focus to its toggle.
Screenshots of focus rings land in test-artifacts/ (docs/development.md#accessibility)."""
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

MEASURE = (Path(__file__).parent / "focus.js").read_text(encoding="utf-8")
MAX_STOPS = 250
MIN_RATIO = 3.0
MIN_WIDTH = 2.0
# A number per focused element (0: nothing focused), kept outside the DOM.
_STOP_KEY = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 0;
    window.__tabStops ||= new WeakMap();
    if (!window.__tabStops.has(el)) window.__tabStops.set(el, (window.__tabCount = (window.__tabCount || 0) + 1));
    return window.__tabStops.get(el);
}"""


def _tab_stops(page) -> list[dict]:
    """Presses Tab from the top of the page until the focus comes round again, measuring the
    focus indicator of every element it stops at."""
    page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
    stops: list[dict] = []
    seen: set[int] = set()
    for _ in range(MAX_STOPS):
        page.keyboard.press("Tab")
        key = page.evaluate(_STOP_KEY)
        if not key:
            continue
        if key in seen:
            break
        seen.add(key)
        stops.append(page.evaluate(MEASURE))
    return stops


def _conversation(page, server, model) -> None:
    """A chat with a reply holding a code block (its Copy button is a tab stop too)."""
    model.chat.append(replies.text("Here:\n\n```python\nprint('hi')\n```\n\nAnything else?"))
    open_page(page, server)
    send(page, "Show me some code")
    page.wait_for_selector(REPLY_DONE)


def _weak(stops: list[dict]) -> list[dict]:
    """The stops whose ring is missing, too thin, or under 3:1."""
    return [s for s in stops if s["width"] < MIN_WIDTH or s["ratio"] < MIN_RATIO]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_focus_ring_is_an_outline_reaching_3_to_1(page, server, model, artifacts, theme):
    page.emulate_media(color_scheme=theme, reduced_motion="reduce")
    _conversation(page, server, model)
    chat = _tab_stops(page)
    page.locator("#messages [data-action=regenerate]").last.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.screenshot(path=artifacts / f"focus-chat-{theme}.png")
    page.focus("#composer-input")
    page.screenshot(path=artifacts / f"focus-composer-{theme}.png")

    open_page(page, server, "/settings")
    settings = _tab_stops(page)
    page.get_by_role("tab", name="Memory").focus()
    page.keyboard.press("ArrowRight")
    page.locator("#cortex-tabs").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / f"focus-settings-tab-{theme}.png")
    page.locator("#persona-new").focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.screenshot(path=artifacts / f"focus-settings-button-{theme}.png")
    page.keyboard.press("Tab")
    expect(page.locator("#card-file")).to_be_focused()
    page.screenshot(path=artifacts / f"focus-settings-card-file-{theme}.png")

    assert len(chat) > 15 and len(settings) > 40, (len(chat), len(settings))
    assert not _weak(chat + settings), _weak(chat + settings)
    assert min(s["ratio"] for s in chat + settings) >= MIN_RATIO


def test_focus_rings_stay_visible_in_forced_colors(page, server, model, artifacts):
    page.emulate_media(forced_colors="active", reduced_motion="reduce")
    _conversation(page, server, model)
    chat = _tab_stops(page)
    page.focus("#new-session")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    page.screenshot(path=artifacts / "focus-forced-colors.png")
    open_page(page, server, "/settings")
    settings = _tab_stops(page)
    missing = [s for s in chat + settings if s["width"] < MIN_WIDTH or s.get("style") in (None, "none")]
    assert chat and settings and not missing, missing


def _focused_in(page, selector: str) -> bool:
    return page.evaluate("(sel) => document.querySelector(sel).contains(document.activeElement)",
                         selector)


def test_the_phone_drawer_keeps_the_focus_until_escape_returns_it_to_the_toggle(phone, server,
                                                                               artifacts):
    open_page(phone, server)
    toggle = phone.get_by_role("button", name="Open sidebar")
    phone.evaluate("() => document.activeElement?.blur()")
    for _ in range(12):
        phone.keyboard.press("Tab")
        assert not _focused_in(phone, "#sidebar"), "Tab reached the closed drawer"
    toggle.focus()
    phone.keyboard.press("Enter")
    expect(phone.locator("#sidebar")).to_be_in_viewport(ratio=1)
    assert _focused_in(phone, "#sidebar")
    stops = phone.evaluate("() => document.querySelectorAll('#sidebar button, #sidebar a,"
                           " #sidebar input').length")
    for key in ["Tab"] * (stops + 3) + ["Shift+Tab"] * (stops + 3):
        phone.keyboard.press(key)
        assert _focused_in(phone, "#sidebar"), f"{key} left the open drawer"
    assert phone.evaluate("() => document.getElementById('main').inert")
    phone.screenshot(path=artifacts / "focus-phone-drawer.png")

    phone.keyboard.press("Escape")
    expect(phone.locator("#sidebar")).not_to_be_in_viewport()
    expect(toggle).to_be_focused()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    assert not phone.evaluate("() => document.getElementById('main').inert")
