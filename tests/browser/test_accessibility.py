"""axe-core over the page states a person reaches: sign-in, first run, the chat (memory note,
editing, branches, search, export, rename, confirm dialog, a failed reply, learning from an
imported history), every settings
section (connection report, persona forms, card import preview, the memory editor's views, history
with its diff, the three-way merge, a review proposal), then German, dark and a phone with the
drawer open. Any violation of any impact fails (docs/development.md#accessibility).

One browser context walks the states in sequence (each builds on the last), so the pass costs
one app and one page. It asks for reduced motion, so axe never reads a colour mid-transition."""
import time

import pytest
from playwright.sync_api import expect

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.browser import axe
from tests.browser.conftest import API_KEY, TIMEOUT_MS, checked_page, settle
from tests.browser.support import LAST_REPLY, READY, REPLY_DONE, drop_file, send
from tests.fakes.claude import replies
from tests.portability.support import ST_CHAT, V3_CARD, b64, png

pytestmark = pytest.mark.browser

TOKEN = "pc-access-token-axe-3f9e0c41d2b75a86"
MEMORY_URL = "/api/personas/default/cortex/memory.md"
PHONE = {"width": 375, "height": 740}
DESKTOP = {"width": 1280, "height": 860}


@pytest.fixture
def api_key():
    """No key at first (None), so the first-run card is one of the states."""


@pytest.fixture
def app_config(app_config):
    """Access control on, so the sign-in page and the sign-out buttons are checked too."""
    return {**app_config, "ACCESS_TOKEN": TOKEN}


class Walk:
    """The page, the app and what axe found in each state visited so far."""

    def __init__(self, page, server, app, model):
        self.page, self.server, self.app, self.model = page, server, app, model
        self.source = axe.axe_source()
        self.found: dict[str, list[dict]] = {}
        self.visited: list[str] = []

    def check(self, state: str) -> None:
        """Runs axe on the page as it is now and keeps its violations under `state`."""
        self.visited.append(state)
        found = axe.violations(self.page, self.source)
        if found:
            self.found[state] = found

    def open(self, path: str) -> None:
        """Loads a page (a new document: a URL differing only by its #fragment would not be)."""
        self.page.goto(self.server.url + path)
        self.page.wait_for_selector(READY)

    def api(self, method: str, path: str, **data) -> dict:
        """A JSON request with the page's sign-in cookie; anything but a 2xx fails the test."""
        response = self.page.request.fetch(self.server.url + path, method=method, data=data)
        assert response.ok, response.text()
        return response.json()


def _memory_with_an_edit(walk: Walk) -> None:
    """A chat turn and a cortex update that adds a line, so the chat shows a memory note."""
    walk.api("PUT", "/api/settings", context_limit=4)
    walk.api("PUT", "/api/cortex/settings", frequency="frequent")
    memory = walk.page.request.get(walk.server.url + MEMORY_URL).json()["content"]
    walk.model.chat.append(replies.text("A cat! Tell me **everything**.\n\n```python\nprint('Pixel')\n```"))
    walk.model.update.extend([
        replies.tool_use([("write_file", {"filename": "memory.md",
                                          "content": memory + "- Has a cat named Pixel.\n"})]),
        replies.text("Noted the cat Pixel.")])
    send(walk.page, "I adopted a cat named Pixel")
    walk.page.wait_for_selector(REPLY_DONE)
    assert [job.status for job in provider.get_cortex_worker(walk.app).run_pending()] == ["done"]
    expect(walk.page.locator("#messages .memory-note")).to_be_visible()


def _chat_states(walk: Walk) -> None:
    """Signs in, enters the key on the first-run card, then chats its way through the states."""
    page = walk.page
    page.goto(walk.server.url + "/")
    expect(page.get_by_label("Access token")).to_be_visible()
    walk.check("sign-in")
    page.get_by_label("Access token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    walk.check("sign-in with an error")
    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(READY)
    expect(page.locator("#key-setup")).to_be_visible()
    walk.check("chat: first run, no key")
    page.fill("#key-input", API_KEY)
    page.press("#key-input", "Enter")
    expect(page.locator("#key-setup")).to_be_hidden()
    walk.check("chat: empty conversation with the greeting")

    _memory_with_an_edit(walk)
    walk.check("chat: conversation with a memory note")
    walk.model.chat.append(replies.text("A dog, how nice!"))
    page.click("#messages .msg-user [data-action=edit]")
    walk.check("chat: editing a message")
    page.fill("#messages .edit-input", "I adopted a dog.")
    page.click("#messages .edit-form button[type=submit]")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator("#messages .msg-user .sibling-count")).to_have_text("2/2")
    walk.check("chat: branches")
    page.click(f"{LAST_REPLY} [data-action=prompt]")
    expect(page.locator("#prompt-dialog .prompt-section").first).to_be_visible()
    page.locator("#prompt-dialog .prompt-section summary").first.click()
    walk.check("chat: prompt inspector")
    page.keyboard.press("Escape")
    expect(page.locator("#prompt-dialog")).to_be_hidden()
    page.fill("#search-input", "dog")
    expect(page.locator("#search-results .search-result")).not_to_have_count(0)
    walk.check("chat: search results")
    page.fill("#search-input", "")
    page.click("#export summary")
    walk.check("chat: export menu")
    page.keyboard.press("Escape")
    page.locator("#session-list .session-item").first.get_by_role("button", name="Rename").click()
    walk.check("chat: renaming a session")
    page.keyboard.press("Escape")
    page.locator("#session-list .session-item").first.get_by_role("button", name="Delete").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    walk.check("chat: confirm dialog")
    page.locator("#confirm-dialog").get_by_role("button", name="Cancel").click()
    walk.model.chat.append(replies.overloaded())
    send(page, "Still there?")
    expect(page.locator("#messages .msg-error")).to_be_visible()
    walk.check("chat: a failed reply with Retry")


def _learn_states(walk: Walk) -> None:
    """An imported conversation's "Learn from this history" dialog: the estimate, a queued run
    with its progress bar and Cancel, and the run cancelled."""
    page = walk.page
    response = page.request.post(walk.server.url + "/api/personas/default/chats/import",
                                  multipart={"file": {"name": "chat.jsonl",
                                                      "mimeType": "application/jsonl",
                                                      "buffer": ST_CHAT}})
    assert response.status == 201, response.text()
    walk.open(f"/?persona=default&session={response.json()['id']}")
    page.click("#learn-open")
    expect(page.locator("#learn-estimate")).to_contain_text("windows")
    walk.check("chat: learn from an imported history, the estimate")
    page.click("#learn-go")
    expect(page.locator("#learn-stop")).to_be_visible()
    walk.check("chat: learning, progress and Cancel")
    page.click("#learn-stop")
    expect(page.locator("#learn-status")).to_have_text("Cancelled; the memory is unchanged.")
    walk.check("chat: learning cancelled")
    page.keyboard.press("Escape")


def _settings_states(walk: Walk) -> None:
    """The settings page whole, then each of its panels and editor states opened in turn."""
    page = walk.page
    walk.open("/settings")
    walk.check("settings: general, personas, memory, data")
    page.click("#test-connection")
    expect(page.locator("#connection-report")).to_be_visible()
    walk.check("settings: connection report")
    page.click("#persona-new")
    expect(page.locator("#persona-form")).to_be_visible()
    walk.check("settings: new persona form")
    page.click("#persona-cancel")
    page.locator(".persona-card").first.get_by_role("button", name="Edit").click()
    expect(page.locator("#persona-form")).to_be_visible()
    walk.check("settings: editing a persona")
    page.click("#persona-cancel")
    drop_file(page, "#card-drop", png({"ccv3": b64(V3_CARD)}), "aria.png")
    expect(page.locator("#card-preview")).to_be_visible()
    walk.check("settings: card import preview")
    page.click("#card-cancel")

    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#cortex-preview")).to_be_visible()
    walk.check("settings: editor preview")
    page.get_by_role("button", name="Split").click()
    walk.check("settings: editor split view")
    page.get_by_role("button", name="Write").click()
    page.get_by_role("tab", name="Soul").click()
    walk.check("settings: editor, soul.md tab")
    page.get_by_role("tab", name="Memory").click()
    page.locator("#history-list .history-item").nth(1).click()
    expect(page.locator("#diff-view")).to_be_visible()
    walk.check("settings: history with a diff")

    current = page.request.get(walk.server.url + MEMORY_URL)
    page.fill("#cortex-text", "# Mine\n")
    saved = page.request.put(walk.server.url + MEMORY_URL, data={"content": "# Theirs\n"},
                             headers={"If-Match": current.headers["etag"]})
    assert saved.ok
    page.click("#cortex-save")
    expect(page.locator("#conflict")).to_be_visible()
    walk.check("settings: three-way merge")
    page.get_by_role("button", name="Discard my draft").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Discard draft").click()
    expect(page.locator("#conflict")).to_be_hidden()


def _review_state(walk: Walk) -> None:
    """Review mode on and one pending proposal, opened. The edit in the chat queued a
    reconciliation and an update; each model run they make ends at once, changing nothing."""
    walk.model.update.extend([replies.text("Nothing to change.")] * 4)
    assert {job.status for job in provider.get_cortex_worker(walk.app).run_pending()} == {"done"}
    walk.model.update.clear()
    walk.api("PUT", "/api/personas/default/cortex/settings", memory_review="review")
    session = walk.api("POST", "/api/sessions", persona_id="default")
    conn = provider.get_db(walk.app).conn()
    add_message(conn, session["id"], "user", "I adopted a dog too.")
    add_message(conn, session["id"], "assistant", "Two pets!")
    memory = walk.page.request.get(walk.server.url + MEMORY_URL).json()["content"]
    walk.model.update.extend([
        replies.tool_use([("write_file", {"filename": "memory.md",
                                          "content": memory + "- Has a dog.\n"})]),
        replies.text("Noted the dog.")])
    walk.api("POST", "/api/personas/default/cortex/update")
    (job,) = provider.get_cortex_worker(walk.app).run_pending()
    assert job.proposal_id, job
    walk.open("/settings?persona=default#memory")
    expect(walk.page.locator("#proposals-count")).to_have_text("1")
    walk.check("settings: memory review with a proposal")


def _language_theme_and_phone_states(walk: Walk) -> None:
    """Both pages in German, in dark, and at 375 px with the drawer open (dark, then light)."""
    page = walk.page
    walk.api("PUT", "/api/settings", language="de")
    walk.open("/")
    walk.check("German: chat")
    walk.open("/settings")
    walk.check("German: settings")
    walk.api("PUT", "/api/settings", language="en")
    page.emulate_media(color_scheme="dark")
    walk.open("/")
    walk.check("dark: chat")
    page.locator("#messages .msg-assistant [data-action=prompt]").first.click()
    expect(page.locator("#prompt-dialog .prompt-section, #prompt-dialog .prompt-missing").first
           ).to_be_visible()
    walk.check("dark: prompt inspector")
    page.keyboard.press("Escape")
    walk.open("/settings?persona=default&file=memory.md&view=history")
    walk.check("dark: settings with a diff")
    page.set_viewport_size(PHONE)
    walk.open("/")
    walk.check("phone, dark: chat")
    page.get_by_role("button", name="Open sidebar").click()
    expect(page.locator("#sidebar")).to_be_in_viewport(ratio=1)
    walk.check("phone, dark: drawer open")
    page.emulate_media(color_scheme="light")
    walk.check("phone: drawer open")
    walk.open("/settings")
    walk.check("phone: settings")


def _csp_still_watched(page, problems: list[str]) -> None:
    """After the walk, an inline script is still refused and its violation still reaches the
    watcher: running axe loosened neither the page's CSP nor the check that fails on it."""
    before = len(problems)
    page.evaluate("""() => { const script = document.createElement('script');
        script.textContent = 'window.__inlineRan = true'; document.head.append(script); }""")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while len(problems) == before and time.monotonic() < deadline:
        settle(page)
    provoked = problems[before:]
    assert provoked and all("CSP violation" in p and "script-src" in p for p in provoked), provoked
    assert page.evaluate("() => window.__inlineRan") is None
    del problems[before:]


def test_axe_finds_no_violation_in_any_page_state(browser, server, app, model):
    problems: list[str] = []
    with checked_page(browser, problems=problems, viewport=DESKTOP, reduced_motion="reduce") as page:
        walk = Walk(page, server, app, model)
        _chat_states(walk)
        _learn_states(walk)
        _settings_states(walk)
        _review_state(walk)
        _language_theme_and_phone_states(walk)
        _csp_still_watched(page, problems)
    assert len(walk.visited) >= 29, walk.visited
    assert not walk.found, "axe found violations:\n" + axe.describe(walk.found)
