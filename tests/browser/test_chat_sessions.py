"""The sidebar: switching personas (each with its own sessions and prompt), and renaming and
deleting sessions."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import LAST_REPLY, REPLY_DONE, open_page, send, system_text
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser


def _create_persona(page, server, **fields) -> dict:
    response = page.request.post(server.url + "/api/personas", data=fields)
    assert response.status == 201, response.text()
    return response.json()


def test_switching_persona_shows_its_own_sessions_and_prompt(page, server, model):
    theo = _create_persona(page, server, name="Theo Brandt",
                           description="A mountain guide who loves telling stories.")
    model.chat.extend([replies.text("Hi from Mira."), replies.text("Servus, Theo here.")])
    open_page(page, server)
    send(page, "Hello Mira")
    page.wait_for_selector(REPLY_DONE)

    page.get_by_role("button", name="Theo Brandt").click()
    expect(page.locator("#chat-title")).to_have_text("Theo Brandt")
    expect(page.locator(".empty-state")).to_contain_text("Chat with Theo Brandt")
    expect(page.locator("#session-list li")).to_have_count(0)
    send(page, "Hello Theo")
    expect(page.locator(LAST_REPLY)).to_contain_text("Servus, Theo here.")
    assert "mountain guide" in system_text(model.chat_bodies[1])
    assert "mountain guide" not in system_text(model.chat_bodies[0])
    assert f"persona={theo['id']}" in page.url

    page.get_by_role("button", name="Mira").click()
    expect(page.locator("#chat-title")).to_have_text("Mira")
    expect(page.locator(LAST_REPLY)).to_contain_text("Hi from Mira.")
    expect(page.locator("#messages .msg")).to_have_count(2)


def test_rename_and_delete_a_session_with_confirmation(page, server, model):
    model.chat.append(replies.text("Sure."))
    open_page(page, server)
    send(page, "First chat")
    page.wait_for_selector(REPLY_DONE)
    page.click("#new-session")
    expect(page.locator("#session-list li")).to_have_count(2)

    first = page.locator("#session-list li").nth(1)
    first.get_by_role("button", name="Rename").click()
    page.fill(".rename-input", "Trip planning")
    page.press(".rename-input", "Enter")
    expect(page.locator("#session-list")).to_contain_text("Trip planning")

    page.get_by_role("button", name="Delete “Trip planning”").click()
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.locator("#session-list li")).to_have_count(2)
    page.get_by_role("button", name="Delete “Trip planning”").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(page.locator("#session-list li")).to_have_count(1)
    sessions = page.request.get(server.url + "/api/sessions?persona_id=default").json()["sessions"]
    assert [s["title"] for s in sessions] == [""]



def _session_list(request) -> bool:
    return "/api/sessions?persona_id=" in request.url


def test_a_late_session_list_neither_undoes_a_change_nor_takes_the_rename_away(page, server,
                                                                               model):
    """The list asked for when a reply ends comes late here (the test holds it, then answers it
    with the list as it was before): it is older than the session made meanwhile, so it is not
    shown but asked for again, and the name being typed stays in its input. On a loaded
    machine a late list undid a rename."""
    model.chat.append(replies.text("Sure."))
    open_page(page, server)
    held = []
    page.route("**/api/sessions?persona_id=*", lambda route: held.append(route), times=1)
    with page.expect_request(_session_list):
        send(page, "First chat")
        page.wait_for_selector(REPLY_DONE)
    page.click("#new-session")
    expect(page.locator("#session-list li")).to_have_count(2)
    stale = {"sessions": [{**s, "title": "Old news"} for s in page.request.get(
        server.url + "/api/sessions?persona_id=default").json()["sessions"]]}

    page.locator("#session-list li").nth(1).get_by_role("button", name="Rename").click()
    page.fill(".rename-input", "Trip planning")
    with page.expect_request(_session_list) as again:
        held.pop().fulfill(json=stale)
    assert again.value.response().ok
    expect(page.locator(".rename-input")).to_have_value("Trip planning")
    page.press(".rename-input", "Enter")
    expect(page.locator("#session-list")).to_contain_text("Trip planning")
    expect(page.locator("#session-list")).not_to_contain_text("Old news")
    titles = [s["title"] for s in page.request.get(
        server.url + "/api/sessions?persona_id=default").json()["sessions"]]
    assert sorted(titles) == ["", "Trip planning"]
