"""A draft in the memory editor never loses to a newer revision: an update ("Update now"),
another tab or a 412 on save opens a three-way merge of base, saved version and draft, and the
merged text is saved with If-Match on the newest revision."""
import pytest
from playwright.sync_api import expect

from src.utils import provider
from tests.browser.support import open_page
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

FILE_URL = "/api/personas/default/cortex/memory.md"
NOTE = "- Has a cat named Pixel."
DETAILS = "## Shared experiences\n"
MINE = "- Jonas likes green tea."


def _file(page, server) -> dict:
    return page.request.get(server.url + FILE_URL).json()


def _put(page, server, content: str) -> dict:
    current = page.request.get(server.url + FILE_URL)
    response = page.request.put(server.url + FILE_URL, data={"content": content},
                                headers={"If-Match": current.headers["etag"]})
    assert response.ok, response.text()
    return response.json()


def _run_update(page, server, app, model) -> str:
    """Clicks "Update now" and lets the worker run a job that appends NOTE to memory.md."""
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    model.chat.append(replies.text("How lovely!"))
    stream = page.request.post(server.url + "/api/chat/stream",
                               data={"session_id": session["id"], "message": "I adopted Pixel!"})
    assert "event: done" in stream.text()
    before = _file(page, server)["content"]
    model.update.extend([
        replies.tool_use([("write_file", {"filename": "memory.md", "content": before + NOTE + "\n"})]),
        replies.text("Noted the cat Pixel.")])
    page.get_by_role("button", name="Update now").click()
    expect(page.locator("#cx-status")).to_have_attribute("data-state", "running")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [job.status for job in finished] == ["done"]
    return before


def test_update_now_with_a_draft_merges_both_and_saves_on_the_newest_revision(page, server, app, model):
    open_page(page, server, "/settings")
    base = page.locator("#cortex-text").input_value()
    assert DETAILS in base
    draft = base.replace(DETAILS, DETAILS + MINE + "\n")
    page.fill("#cortex-text", draft)

    _run_update(page, server, app, model)

    expect(page.locator("#conflict")).to_be_visible()
    expect(page.locator("#cortex-text")).to_be_hidden()
    expect(page.locator(".merge-from-saved .merge-add")).to_have_text(NOTE)
    expect(page.locator(".merge-from-mine .merge-add")).to_have_text(MINE)
    expect(page.locator(".merge-conflict")).to_have_count(0)
    saved = _file(page, server)
    assert saved["content"].endswith(NOTE + "\n") and MINE not in saved["content"]

    page.get_by_role("button", name="Save merged version").click()
    expect(page.locator("#conflict")).to_be_hidden()
    final = _file(page, server)
    assert final["content"] == draft + NOTE + "\n"
    assert final["revision"] == saved["revision"] + 1
    expect(page.locator("#cortex-text")).to_have_value(final["content"])
    expect(page.locator("#cortex-save")).to_be_disabled()
    expect(page.locator("#history-list .history-item").first).to_contain_text("You")


def test_both_appending_is_one_hunk_kept_both_by_default(page, server, app, model):
    open_page(page, server, "/settings")
    base = page.locator("#cortex-text").input_value()
    page.fill("#cortex-text", base + MINE + "\n")

    _run_update(page, server, app, model)

    hunk = page.locator(".merge-conflict")
    expect(hunk).to_have_count(1)
    expect(hunk.locator(".merge-side-saved .merge-add")).to_have_text(NOTE)
    expect(hunk.locator(".merge-side-mine .merge-add")).to_have_text(MINE)
    expect(hunk.get_by_role("radio", name="Keep both")).to_be_checked()
    page.get_by_role("button", name="Save merged version").click()
    expect(page.locator("#conflict")).to_be_hidden()
    assert _file(page, server)["content"] == base + NOTE + "\n" + MINE + "\n"


def test_overlapping_hunks_are_resolved_one_by_one_after_a_412(page, server):
    _put(page, server, "# M\n\n- one\n\n- two\n")
    open_page(page, server, "/settings")
    page.fill("#cortex-text", "# M\n\n- one (mine)\n\n- two (mine)\n")
    theirs = _put(page, server, "# M\n\n- one (theirs)\n\n- two (theirs)\n")

    page.click("#cortex-save")
    hunks = page.locator(".merge-conflict")
    expect(hunks).to_have_count(2)
    expect(hunks.nth(0).locator(".merge-del")).to_have_text("- one")
    hunks.nth(0).get_by_role("radio", name="Only the saved version").check()
    page.get_by_role("button", name="Save merged version").click()
    expect(page.locator("#conflict")).to_be_hidden()
    final = _file(page, server)
    assert final["content"] == "# M\n\n- one (theirs)\n\n- two (theirs)\n- two (mine)\n"
    assert final["revision"] == theirs["revision"] + 1


def test_another_tab_saving_opens_the_merge_without_a_save(page, server):
    open_page(page, server, "/settings")
    page.fill("#cortex-text", "# Mine\n")
    other = open_page(page.context.new_page(), server, "/settings")
    other.fill("#cortex-text", "# Theirs\n")
    other.click("#cortex-save")
    expect(other.locator("#cortex-status")).to_contain_text("Saved as version #")

    expect(page.locator("#conflict")).to_be_visible()
    page.get_by_role("button", name="Edit the merged text").click()
    expect(page.locator("#cortex-text")).to_have_value("# Theirs\n# Mine\n")
    expect(page.locator("#cortex-rev")).to_contain_text(f"version #{_file(page, server)['version']}")
    page.click("#cortex-save")
    expect(page.locator("#cortex-status")).to_contain_text("Saved as version #")
    assert _file(page, server)["content"] == "# Theirs\n# Mine\n"


def test_discarding_the_draft_asks_and_shows_the_saved_version(page, server):
    open_page(page, server, "/settings")
    page.fill("#cortex-text", "# Mine\n")
    _put(page, server, "# Theirs\n")
    page.click("#cortex-save")
    page.get_by_role("button", name="Discard my draft").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Discard draft").click()
    expect(page.locator("#conflict")).to_be_hidden()
    expect(page.locator("#cortex-text")).to_have_value("# Theirs\n")
    expect(page.locator("#cortex-save")).to_be_disabled()


def test_restoring_with_a_draft_merges_instead_of_discarding(page, server):
    first = _file(page, server)
    _put(page, server, first["content"] + "- Later line.\n")
    open_page(page, server, "/settings?persona=default&file=memory.md&view=history")
    draft = first["content"].replace(DETAILS, DETAILS + MINE + "\n") + "- Later line.\n"
    page.fill("#cortex-text", draft)
    page.locator("#history-list .history-item").nth(1).click()
    page.get_by_role("button", name="Restore #1").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Restore").click()

    expect(page.locator("#conflict")).to_be_visible()
    expect(page.locator(".merge-from-saved .merge-del")).to_have_text("- Later line.")
    expect(page.locator(".merge-from-mine .merge-add")).to_have_text(MINE)
    page.get_by_role("button", name="Save merged version").click()
    expect(page.locator("#conflict")).to_be_hidden()
    assert _file(page, server)["content"] == first["content"].replace(DETAILS, DETAILS + MINE + "\n")


def test_the_merge_view_numbers_versions_as_the_history_does(page, server):
    soul = "/api/personas/default/cortex/soul.md"
    for n in range(4):                    # other files' revisions push the ids far past #2
        current = page.request.get(server.url + soul)
        assert page.request.put(server.url + soul, data={"content": f"I am calm. {n}\n"},
                                headers={"If-Match": current.headers["etag"]}).ok
    open_page(page, server, "/settings")
    first = _file(page, server)
    expect(page.locator("#cortex-rev")).to_have_text("memory.md · version #1")
    page.fill("#cortex-text", first["content"] + MINE + "\n")
    saved = _put(page, server, first["content"] + NOTE + "\n")
    assert saved["version"] == 2 and saved["revision"] > 5

    page.click("#cortex-save")
    info = page.locator("#conflict-info")
    expect(info).to_contain_text("Your draft started from version #1; version #2 was saved")
    expect(info).not_to_contain_text(f"{saved['revision']}")
    expect(page.locator("#history-list .history-item").first.locator(".history-rev")).to_have_text("#2")
    page.get_by_role("button", name="Save merged version").click()
    expect(page.locator("#cortex-status")).to_have_text("Saved the merged version as #3.")
    expect(page.locator("#cortex-rev")).to_have_text("memory.md · version #3")
    expect(page.locator("#history-list .history-item").first.locator(".history-rev")).to_have_text("#3")
