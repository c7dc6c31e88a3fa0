"""Review mode, pins and sleep on the settings page: accept, edit-then-accept, reject, a stale
proposal's conflict, a pin the model's edit is refused at, consolidation and restore."""
import pytest
from playwright.sync_api import expect

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.browser.support import open_page
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser
BASE = "/api/personas/default/cortex"
MEMORY = "# Memories\n\n## Facts\n- Jonas lives in Bremen.\n\n## Shared moments\n"
CAT = "- Jonas has a cat\u200b called Miso."


def _memory(page, server) -> dict:
    return page.request.get(server.url + f"{BASE}/memory.md").json()


def _put_memory(page, server, text: str) -> int:
    rev = _memory(page, server)["revision"]
    response = page.request.put(server.url + f"{BASE}/memory.md", data={"content": text},
                                headers={"If-Match": f'"{rev}"'})
    assert response.ok
    return response.json()["revision"]


def _chat(page, server, app, text: str) -> None:
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    conn = provider.get_db(app).conn()
    add_message(conn, session["id"], "user", text)
    add_message(conn, session["id"], "assistant", "Nice!")


def _update(page, server, app, model, *calls) -> dict:
    model.update.extend([replies.tool_use(list(calls)), replies.text("Noted the cat.")])
    page.request.post(server.url + f"{BASE}/update", data={})
    (job,) = provider.get_cortex_worker(app).run_pending()
    return job


@pytest.fixture
def proposed(page, server, app, model):
    """Review mode on, memory.md known, and one pending proposal inserting CAT."""
    _put_memory(page, server, MEMORY)
    page.request.put(server.url + f"{BASE}/settings", data={"memory_review": "review"})
    _chat(page, server, app, "I adopted a cat called Miso.")
    job = _update(page, server, app, model,
                  ("insert", {"filename": "memory.md", "insert_line": 4, "insert_text": CAT}))
    assert job.proposal_id
    return job


def test_accept_a_proposal_with_invisible_characters_shown(page, server, proposed):
    open_page(page, server, "/settings")
    expect(page.locator("#proposals-count")).to_have_text("1")
    expect(page.locator("#mr-mode")).to_have_value("review")
    card = page.locator(".proposal-file[data-file='memory.md']")
    expect(card.locator(".diff-add")).to_have_text("- Jonas has a cat⟦U+200B⟧ called Miso.")
    expect(card).to_contain_text("1 invisible or direction-changing character")
    expect(page.locator("#cortex-text")).to_have_value(MEMORY)
    card.get_by_role("button", name="Accept", exact=True).click()
    expect(page.locator("#proposals-count")).to_have_text("0")
    expect(page.locator("#cortex-text")).to_have_value(MEMORY.replace(
        "Bremen.\n", f"Bremen.\n{CAT}\n"))
    assert CAT in _memory(page, server)["content"]


def test_edit_then_accept(page, server, proposed):
    open_page(page, server, "/settings")
    card = page.locator(".proposal-file[data-file='memory.md']")
    card.get_by_role("button", name="Edit").click()
    edited = MEMORY + "- Jonas has a ginger cat, Miso.\n"
    card.locator("textarea").fill(edited)
    card.get_by_role("button", name="Accept edited text").click()
    expect(page.locator("#proposals-count")).to_have_text("0")
    expect(page.locator("#cortex-text")).to_have_value(edited)
    history = page.request.get(server.url + f"{BASE}/memory.md/history").json()["revisions"]
    assert history[0]["reviewed"]["decision"] == "edited"


def test_reject(page, server, proposed):
    open_page(page, server, "/settings")
    page.locator(".proposal-file[data-file='memory.md']").get_by_role("button", name="Reject").click()
    expect(page.locator("#proposals-count")).to_have_text("0")
    expect(page.locator("#proposal-list")).to_contain_text("Nothing waiting for review.")
    assert _memory(page, server)["content"] == MEMORY


def test_a_stale_proposal_shows_a_conflict_to_resolve(page, server, app, model):
    _put_memory(page, server, MEMORY)
    page.request.put(server.url + f"{BASE}/settings", data={"memory_review": "review"})
    _chat(page, server, app, "My cat Miso lives with me in Bremen.")
    _update(page, server, app, model, ("str_replace", {
        "filename": "memory.md", "old_str": "- Jonas lives in Bremen.",
        "new_str": "- Jonas lives in Bremen with Miso."}))
    moved = MEMORY.replace("Bremen.", "Hamburg.")
    _put_memory(page, server, moved)
    open_page(page, server, "/settings")
    card = page.locator(".proposal-file[data-file='memory.md']")
    expect(card.locator(".proposal-stale")).to_contain_text("Conflict")
    expect(card.get_by_role("button", name="Accept", exact=True)).to_be_disabled()
    editor = card.locator("textarea")
    expect(editor).to_have_value(moved)
    merged = moved.replace("Hamburg.", "Hamburg with Miso.")
    editor.fill(merged)
    card.get_by_role("button", name="Accept edited text").click()
    expect(page.locator("#proposals-count")).to_have_text("0")
    expect(page.locator("#cortex-text")).to_have_value(merged)


def test_pin_a_section_and_an_update_that_changes_it_is_refused(page, server, app, model, claude):
    _put_memory(page, server, MEMORY)
    open_page(page, server, "/settings")
    text = page.locator("#cortex-text")
    text.evaluate("(el) => { const i = el.value.indexOf('## Facts') + 3;"
                  " el.focus(); el.setSelectionRange(i, i); }")
    page.get_by_role("button", name="Pin / unpin").click()
    pinned = MEMORY.replace("## Facts\n- Jonas lives in Bremen.\n",
                            "<!-- pin -->\n## Facts\n- Jonas lives in Bremen.\n<!-- /pin -->\n")
    expect(text).to_have_value(pinned)
    page.locator("#cortex-save").click()
    expect(page.locator("#cortex-save")).to_be_disabled()
    assert _memory(page, server)["content"] == pinned

    _chat(page, server, app, "I moved to Hamburg.")
    job = _update(page, server, app, model, ("str_replace", {
        "filename": "memory.md", "old_str": "in Bremen.", "new_str": "in Hamburg."}))
    refusal = claude.requests[-1].messages[-1]["content"][0]
    assert refusal["is_error"] and "lines 3-6" in str(refusal["content"])
    assert job.status == "done" and _memory(page, server)["content"] == pinned

    text.fill(pinned + "<!-- pin -->\n- unfinished\n")
    expect(page.locator("#pin-warnings")).to_contain_text("never closed")


def test_consolidate_now_and_restore_from_the_archive(page, server, app, model):
    long = MEMORY.replace("## Shared moments\n", "## Shared moments\n- Yesterday we baked bread.\n"
                          "- We baked bread again on 2025-05-02.\n")
    short = MEMORY.replace("## Shared moments\n", "## Shared moments\n"
                           "- We baked bread in May 2025.\n")
    _put_memory(page, server, long)
    open_page(page, server, "/settings")
    expect(page.locator("#sleep-status")).to_contain_text("Not consolidated yet.")
    page.get_by_role("button", name="Consolidate now").click()
    expect(page.locator("#sleep-status")).to_contain_text("A consolidation is queued.")
    model.update.extend([replies.tool_use([("write_file", {"filename": "memory.md",
                                                           "content": short})]),
                         replies.text("Merged the bread.")])
    (job,) = provider.get_cortex_worker(app).run_pending()
    assert (job.status, job.reason) == ("done", "consolidate")
    expect(page.locator("#cortex-text")).to_have_value(short)
    expect(page.locator("#sleep-status")).to_contain_text("consolidated:")
    entry = page.locator("#archive-list .archive-entry").first
    expect(entry.locator(".archive-text")).to_contain_text("Yesterday we baked bread.")
    page.fill("#archive-q", "again")
    expect(entry.locator(".archive-text")).to_contain_text("again on 2025-05-02")
    entry.get_by_role("button", name="Restore to the file").click()
    expect(page.locator("#cortex-text")).to_have_value(
        short + "- Yesterday we baked bread.\n- We baked bread again on 2025-05-02.\n")
    expect(entry).to_contain_text("restored")


def test_the_chat_memory_indicator_counts_pending_proposals(page, server, proposed):
    open_page(page, server, "/")
    expect(page.locator("#memory-proposals")).to_have_text("1 to review")


def test_update_now_in_review_mode_says_a_proposal_is_waiting(page, server, app, model):
    _put_memory(page, server, MEMORY)
    page.request.put(server.url + f"{BASE}/settings", data={"memory_review": "review"})
    _chat(page, server, app, "I adopted a cat called Miso.")
    model.update.extend([replies.tool_use([("insert", {
        "filename": "memory.md", "insert_line": 4, "insert_text": CAT})]),
        replies.text("Noted the cat.")])
    open_page(page, server, "/settings")
    page.get_by_role("button", name="Update now").click()
    status = page.locator("#cx-status")
    expect(status).to_have_attribute("data-state", "running")
    (job,) = provider.get_cortex_worker(app).run_pending()
    assert job.proposal_id

    expect(status).to_contain_text("a proposed change is waiting for your review")
    expect(status).not_to_contain_text("nothing needed to change")
    expect(page.locator("#proposals-count")).to_have_text("1")
    status.get_by_role("button", name="Review it").click()
    expect(page.locator("#proposal-title")).to_be_focused()
    expect(page.locator(".proposal-file[data-file='memory.md'] .diff-add")).to_contain_text("Miso")
    assert _memory(page, server)["content"] == MEMORY
