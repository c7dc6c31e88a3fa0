"""The persona's greeting opens each conversation as a marked bubble; it is never stored."""
import pytest
from playwright.sync_api import expect

from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

MIRA_GREETING = "Hi, I'm Mira. I'm glad you're here. How has your day been so far?"
GREETING = "#messages .greeting"


def test_greeting_bubble_opens_a_new_session_and_is_not_a_message(page, server, model):
    model.chat.append(replies.text("Glad to hear it."))
    open_page(page, server)
    expect(page.locator(".empty-state")).to_contain_text("Chat with Mira")
    greeting = page.get_by_role("article", name="Greeting from Mira")
    expect(greeting).to_contain_text(MIRA_GREETING)
    expect(greeting.locator(".greeting-label")).to_have_text("Greeting")

    send(page, "Pretty good, thanks")
    page.wait_for_selector(REPLY_DONE)
    expect(page.locator(".empty-state")).to_have_count(0)
    expect(page.locator(f"{GREETING}:first-child")).to_contain_text(MIRA_GREETING)
    expect(page.locator("#messages .msg")).to_have_count(2)
    session_id = page.evaluate("new URLSearchParams(location.search).get('session')")
    stored = page.request.get(f"{server.url}/api/sessions/{session_id}").json()["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert all(MIRA_GREETING not in m["content"] for m in stored)

    page.click("#new-session")
    expect(page.locator("#session-list li")).to_have_count(2)
    expect(page.locator("#messages .msg")).to_have_count(0)
    expect(page.locator(GREETING)).to_contain_text(MIRA_GREETING)


def test_no_greeting_bubble_for_a_persona_without_one(page, server):
    response = page.request.post(server.url + "/api/personas", data={"name": "Quiet Quinn"})
    assert response.status == 201, response.text()
    open_page(page, server, f"/?persona={response.json()['id']}")
    expect(page.locator(".empty-state")).to_contain_text("Say hello to start a conversation.")
    expect(page.locator(GREETING)).to_have_count(0)
