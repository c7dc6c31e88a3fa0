"""World info in the browser (docs/world-info.md): SillyTavern's Seraphina card, dropped on the
settings page, brings its lorebook; a chat message naming a key gets a reply that shows the
fired entry beside "Memory used"; the book editor changes an entry."""
import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.support import LAST_REPLY, REPLY_DONE, open_page, send, system_text
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser
CARD = (Path(__file__).parents[1] / "world" / "fixtures" / "seraphina.json").read_bytes()


def _import(page, server) -> dict:
    open_page(page, server, "/settings")
    transfer = page.evaluate_handle(
        """(bytes) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], 'seraphina.json',
                                        { type: 'application/json' }));
            return transfer;
        }""", list(CARD))
    for kind in ("dragenter", "dragover", "drop"):
        page.dispatch_event("#card-drop", kind, {"dataTransfer": transfer})
    expect(page.locator("#card-preview-name")).to_have_text("Seraphina")
    page.click("#card-create")
    expect(page.locator(".persona-card", has_text="Seraphina")).to_be_visible()
    personas = page.request.get(server.url + "/api/personas").json()["personas"]
    return next(p for p in personas if p["name"] == "Seraphina")


def test_a_key_in_the_chat_shows_its_entry_under_the_reply(page, server, model):
    persona = _import(page, server)
    open_page(page, server, f"/?persona={persona['id']}")
    model.chat.append(replies.text("The forest is my home."))
    send(page, "What is this forest?")
    page.wait_for_selector(REPLY_DONE)
    world = page.locator(f"{LAST_REPLY} .msg-world")
    expect(world).to_be_visible()
    expect(page.locator(f"{LAST_REPLY} .msg-memory").first).to_contain_text("Memory used")
    world.locator("summary").click()
    expect(world).to_contain_text("key: forest")
    expect(world).to_contain_text("Eldoria is here, all of the woods.")
    sent = system_text(model.chat_bodies[-1])
    assert "Eldoria is here, all of the woods." in sent
    cached = model.chat_bodies[-1]["system"][0]
    assert "cache_control" in cached and "Eldoria is here" not in cached["text"]
    page.reload()
    expect(page.locator(f"{LAST_REPLY} .msg-world")).to_be_visible()


def test_the_book_editor_changes_an_entry(page, server, model):
    persona = _import(page, server)
    tile = page.locator(".persona-card", has_text="Seraphina")
    tile.get_by_role("button", name="Edit Seraphina").click()
    panel = page.locator("#world-panel")
    expect(panel).to_be_visible()
    expect(page.locator("#world-book")).to_contain_text("Eldoria (own book)")
    entries = page.locator("#world-entries .world-entry")
    expect(entries).to_have_count(4)
    entries.first.get_by_role("button", name="Edit").click()
    expect(page.locator("#we-keys")).to_have_value("eldoria, wood, forest, magical forest")
    page.fill("#we-content", "Eldoria is the forest Seraphina guards.")
    page.fill("#we-keys", "eldoria, grove")
    page.check("#we-constant")
    page.click("#we-save")
    expect(page.locator("#world-entry-form")).to_be_hidden()
    expect(entries.first).to_contain_text("eldoria, grove")
    books = page.request.get(f"{server.url}/api/personas/{persona['id']}/world-books").json()
    first = books["books"][0]["entries"][0]
    assert first["content"] == "Eldoria is the forest Seraphina guards."
    assert first["keys"] == ["eldoria", "grove"] and first["constant"] is True
    exported = json.loads(page.request.get(
        f"{server.url}/api/personas/{persona['id']}/export?format=json").body())
    assert exported["data"]["character_book"]["entries"][0]["extensions"] == \
        {"position": 0, "probability": None, "useProbability": False}


def test_book_settings_outside_their_limits_are_explained_before_sending(page, server, model):
    """The scan depth's bounds come from `/api/limits`; a value outside them is named in words
    beside the form, the field focused, and nothing is sent (the server's refusal came as a
    bare toast before)."""
    _import(page, server)
    page.locator(".persona-card", has_text="Seraphina").get_by_role(
        "button", name="Edit Seraphina").click()
    expect(page.locator("#world-panel")).to_be_visible()
    patches = []
    page.on("request", lambda r: patches.append(r.url) if r.method == "PATCH" else None)
    page.fill("#wb-scan-depth", "5000")
    page.click("#wb-save")
    expect(page.locator("#wb-error")).to_have_text(
        "Scan depth (messages) must be a whole number from 0 to 1000.")
    expect(page.locator("#wb-scan-depth")).to_be_focused()
    expect(page.locator("#wb-scan-depth")).to_have_attribute("aria-invalid", "true")
    assert patches == []
    page.fill("#wb-scan-depth", "4")
    with page.expect_response(lambda r: r.request.method == "PATCH") as answer:
        page.click("#wb-save")
    assert answer.value.status == 200
    expect(page.locator("#wb-error")).to_have_text("")
    expect(page.locator("#wb-scan-depth")).not_to_have_attribute("aria-invalid", "true")
