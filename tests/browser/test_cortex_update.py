"""Cortex updates seen from the browser: "update now" on the settings page with live progress,
and the chat's memory indicator following an update the chat triggered, up to its diff."""
import pytest
from playwright.sync_api import expect

from src.utils import provider
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

NOTE = "- Has a cat named Pixel.\n"


def _update_replies(memory: str):
    """A model that appends one line to memory.md, then summarises."""
    return [replies.tool_use([("write_file", {"filename": "memory.md", "content": memory + NOTE})]),
            replies.text("Noted the cat Pixel.")]


def _memory(page, server) -> str:
    return page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()["content"]


def _chatted_then_settings(page, server, model) -> None:
    """One exchange with the default persona, an update ready on the fake, the settings open."""
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    model.chat.append(replies.text("How lovely!"))
    stream = page.request.post(server.url + "/api/chat/stream",
                               data={"session_id": session["id"], "message": "I adopted Pixel!"})
    assert "event: done" in stream.text()
    model.update.extend(_update_replies(_memory(page, server)))
    open_page(page, server, "/settings")


def test_update_now_shows_progress_and_the_change(page, server, app, model):
    _chatted_then_settings(page, server, model)

    page.get_by_role("button", name="Update now").click()
    status = page.locator("#cx-status")
    expect(status).to_have_attribute("data-state", "running")
    expect(page.get_by_role("button", name="Update now")).to_be_disabled()
    finished = provider.get_cortex_worker(app).run_pending()
    assert [job.status for job in finished] == ["done"]

    expect(status).to_have_text("Memory updated: memory.md changed.")
    expect(page.locator("#cortex-text")).to_have_value(_memory(page, server))
    assert _memory(page, server).endswith(NOTE)
    latest = page.locator("#history-list .history-item").first
    expect(latest).to_contain_text("Persona")
    expect(latest).to_contain_text("Noted the cat Pixel.")
    expect(page.locator("#diff .diff-add")).to_have_text(NOTE.strip())


def test_memory_indicator_follows_a_triggered_update_to_its_diff(page, server, app, model):
    page.request.put(server.url + "/api/settings", data={"context_limit": 4})
    page.request.put(server.url + "/api/cortex/settings", data={"frequency": "frequent"})
    model.chat.append(replies.text("A cat! Tell me everything."))
    model.update.extend(_update_replies(_memory(page, server)))
    open_page(page, server)
    indicator = page.locator("#memory")

    send(page, "I adopted a cat named Pixel")
    page.wait_for_selector(REPLY_DONE)
    expect(indicator).to_have_attribute("data-state", "running")
    expect(page.locator("#memory-label")).to_have_text("Updating memory…")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [job.status for job in finished] == ["done"]

    expect(indicator).to_have_attribute("data-state", "updated")
    link = page.locator("#memory-link")
    expect(link).to_have_attribute(
        "href", "/settings?persona=default&file=memory.md&view=history#memory")
    link.click()
    page.wait_for_url("**/settings?**")
    expect(page.locator("#diff .diff-add")).to_have_text(NOTE.strip())
    expect(page.locator("#diff")).to_be_focused()
    latest = page.locator("#history-list .history-item").first
    expect(latest).to_contain_text("Noted the cat Pixel.")


def test_a_memory_note_stays_in_the_timeline_and_opens_its_own_diff(page, server, app, model):
    page.request.put(server.url + "/api/settings", data={"context_limit": 4})
    page.request.put(server.url + "/api/cortex/settings", data={"frequency": "frequent"})
    name = page.request.get(server.url + "/api/personas/default").json()["name"]
    model.chat.append(replies.text("A cat! Tell me everything."))
    model.update.extend(_update_replies(_memory(page, server)))
    open_page(page, server)
    send(page, "I adopted a cat named Pixel")
    page.wait_for_selector(REPLY_DONE)
    assert [job.status for job in provider.get_cortex_worker(app).run_pending()] == ["done"]

    note = page.locator("#messages .msg-assistant + .memory-note")
    expect(note).to_contain_text(f"{name} remembered:")
    expect(note.locator("li")).to_have_text(["Has a cat named Pixel."])
    page.reload()
    expect(note).to_have_count(1)
    expect(note.locator("li")).to_have_text(["Has a cat named Pixel."])

    memory = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    edited = page.request.put(server.url + "/api/personas/default/cortex/memory.md",
                              data={"content": memory["content"] + "- Typed by me.\n"},
                              headers={"If-Match": f'"{memory["revision"]}"'})
    assert edited.ok
    note.get_by_role("link", name="See the change in memory.md").click()
    page.wait_for_url("**/settings?**")
    expect(page.locator("#diff .diff-add")).to_have_text(NOTE.strip())
    expect(page.locator("#history-list .history-item[aria-current=true]")).to_contain_text(
        "Noted the cat Pixel.")


def test_a_refresh_that_fails_after_an_update_is_told_not_thrown(page, server, app, model):
    """The page reloads the file, its history and the pending proposals once an update ends;
    when one of those requests gets no answer (here the proposals', cut off in the browser)
    the person is told, and no unhandled rejection reaches the page (the page fixture fails
    the test on any page error: before, one was thrown, and a test whose page closed while
    that refresh was in flight failed so at teardown)."""
    _chatted_then_settings(page, server, model)
    page.route("**/cortex/proposals?status=pending", lambda route: route.abort())

    page.get_by_role("button", name="Update now").click()
    expect(page.locator("#cx-status")).to_have_attribute("data-state", "running")
    finished = provider.get_cortex_worker(app).run_pending()
    assert [job.status for job in finished] == ["done"]

    expect(page.locator("#cx-status")).to_have_text("Memory updated: memory.md changed.")
    expect(page.locator("#toast.toast-error")).to_have_text(
        "The server could not be reached. Check that it is running.")
    expect(page.locator("#cortex-text")).to_have_value(_memory(page, server))
