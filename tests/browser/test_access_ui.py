"""Losing the sign-in while the chat is open (a 401 from the API, a refused WebSocket) leads to
/signin and back to the same conversation with the draft intact; the sign-out control."""
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS, checked_page
from tests.browser.support import READY, REPLY_DONE, open_page, send
from tests.fakes.claude import replies

TOKEN = "pc-access-token-ui-3b9e61f0d4a2c875"
DRAFT = "Half a thought,\nstill typing it"
SIGNIN_URL = re.compile(r"/signin\?next=")
# Chromium logs the refused upgrade itself; the tests refuse one on purpose.
REFUSED_SOCKET = ("WebSocket connection to",)

pytestmark = pytest.mark.browser


@pytest.fixture
def access_token():
    """Access control is on, unless a test parametrizes this to None."""
    return TOKEN


@pytest.fixture
def app_config(app_config, access_token):
    return {**app_config, "ACCESS_TOKEN": access_token}


def _sign_in(page) -> None:
    """Fills in the sign-in form the page shows and waits for the page it leads back to."""
    page.get_by_label("Access token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector(READY)


def _next_of(url: str) -> str:
    [target] = parse_qs(urlparse(url).query)["next"]
    return target


def _create_session(page, server) -> dict:
    response = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"})
    assert response.status == 201, response.text()
    return response.json()


def test_a_401_from_the_api_leads_to_sign_in_and_back_with_the_draft(page, server):
    page.goto(server.url + "/")
    _sign_in(page)
    older = _create_session(page, server)
    _create_session(page, server)
    here = f"/?persona=default&session={older['id']}"
    open_page(page, server, here)
    expect(page.locator("#session-list [aria-current=true]")).to_have_count(1)
    page.fill("#composer-input", DRAFT)

    page.context.clear_cookies()
    page.click("#new-session")
    page.wait_for_url(SIGNIN_URL)
    assert _next_of(page.url) == here
    _sign_in(page)

    assert page.url == server.url + here
    expect(page.locator("#composer-input")).to_have_value(DRAFT)
    expect(page.locator("#session-list li")).to_have_count(2)
    assert page.evaluate("window.sessionStorage.length") == 0


@pytest.fixture
def socket_page(browser):
    """A desktop page on which refused WebSocket upgrades are expected."""
    with checked_page(browser, expected_console=REFUSED_SOCKET,
                      viewport={"width": 1280, "height": 860}) as tab:
        yield tab


def test_a_refused_socket_leads_to_sign_in_and_back_with_the_draft(socket_page, server, model):
    page = socket_page
    sockets = []

    def through_to_server(route):
        route.connect_to_server()
        sockets.append(route)

    page.route_web_socket(re.compile(r"/ws/chat$"), through_to_server)
    page.goto(server.url + "/")
    _sign_in(page)
    model.chat.append(replies.text("Hello back."))
    send(page, "Hello")
    page.wait_for_selector(REPLY_DONE)
    here = urlparse(page.url)._replace(scheme="", netloc="").geturl()
    page.fill("#composer-input", DRAFT)

    page.context.clear_cookies()
    sockets[-1].close()
    page.wait_for_url(SIGNIN_URL, timeout=TIMEOUT_MS)
    assert _next_of(page.url) == here
    _sign_in(page)

    assert page.url == server.url + here
    expect(page.locator("#composer-input")).to_have_value(DRAFT)
    expect(page.locator("#messages .msg-assistant")).to_contain_text("Hello back.")


def test_sign_out_from_the_chat_and_from_settings(page, server):
    page.goto(server.url + "/settings")
    _sign_in(page)
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(server.url + "/signin")
    assert page.context.cookies() == []

    _sign_in(page)
    signout = page.locator(".sidebar-foot").get_by_role("button", name="Sign out")
    expect(signout).to_be_visible()
    signout.click()
    page.wait_for_url(server.url + "/signin")
    expect(page.get_by_label("Access token")).to_be_visible()
    assert page.context.cookies() == []
    assert page.goto(server.url + "/").url.startswith(server.url + "/signin?next=")


@pytest.mark.parametrize("access_token", [None])
def test_no_sign_out_control_without_access_control(page, server, access_token):
    for path in ("/", "/settings"):
        open_page(page, server, path)
        expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
