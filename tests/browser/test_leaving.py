"""Leaving a page (reload, navigation) cuts off its requests and its socket; the browser reports
those as network failures. They must not reach the person as "the server could not be reached"
(nor as an uncaught error), while a real network failure on a page that stays still does. The old
page writes what it reports into sessionStorage, which survives the reload, so the test can read
what it said while it went away."""
import socket
import struct
import threading

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import checked_page
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

# Every error toast and every uncaught rejection of any page, kept across reloads.
_RECORD_REPORTS = """
const note = (text) => sessionStorage.setItem('reports',
  JSON.stringify([...JSON.parse(sessionStorage.getItem('reports') || '[]'), text]));
window.addEventListener('unhandledrejection', (event) => note(`uncaught: ${event.reason}`));
window.addEventListener('pagehide', () => sessionStorage.setItem('left', 'yes'));
document.addEventListener('DOMContentLoaded', () => {
  const toast = document.getElementById('toast');
  if (toast) new MutationObserver(() => toast.classList.contains('toast-error')
    && note(`toast: ${toast.textContent}`)).observe(toast, { childList: true, characterData: true,
    subtree: true, attributes: true });
});
"""
_REQUEST = """async (path) => {
  const { request } = await import('/static/js/lib/api.js');
  request('GET', path).then(() => sessionStorage.setItem('outcome', 'answered'),
    (err) => sessionStorage.setItem('outcome', `${err.code}: ${err.message}`));
}"""


def _held(page, pattern: str) -> list:
    """Routes `pattern`: the first matching request is held unanswered, later ones pass."""
    held = []
    page.route(pattern, lambda route: route.continue_() if held else held.append(route))
    return held


def _stored(page, key: str):
    return page.evaluate("(key) => sessionStorage.getItem(key)", key)


@pytest.fixture
def module_page(browser, server):
    with checked_page(browser) as tab:
        tab.goto(server.url + "/settings")  # a page with the interface strings the modules need
        tab.wait_for_load_state("networkidle")
        yield tab


def test_a_request_cut_off_by_a_reload_is_not_reported(module_page):
    _held(module_page, "**/api/personas")
    with module_page.expect_request("**/api/personas"):
        module_page.evaluate(_REQUEST, "/api/personas")
    module_page.evaluate("() => window.addEventListener('pagehide', () => "
                         "sessionStorage.setItem('left', 'yes'))")
    module_page.reload()
    assert _stored(module_page, "left") == "yes"
    assert _stored(module_page, "outcome") is None


def test_a_request_that_fails_while_the_page_stays_is_reported(module_page):
    module_page.route("**/api/personas", lambda route: route.abort())
    module_page.evaluate(_REQUEST, "/api/personas")
    module_page.wait_for_function("() => sessionStorage.getItem('outcome') !== null")
    assert _stored(module_page, "outcome") == (
        "network_error: The server could not be reached. Check that it is running.")


@pytest.mark.parametrize("cut_off", ["**/api/sessions?persona_id=*", "**/api/sessions/*?limit=*"])
def test_reloading_the_chat_mid_request_reports_nothing(page, server, model, cut_off):
    """After a reply the chat refreshes its session list and reads the session back; a reload
    cuts either off (the flaky reload in test_chat_tree was this). Before the fix the old page
    told the person "The server could not be reached" (a toast, or an uncaught rejection that
    Chromium reports only sometimes during an unload)."""
    page.add_init_script(_RECORD_REPORTS)
    model.chat.append(replies.text("Hello there."))
    open_page(page, server)
    _held(page, cut_off)
    with page.expect_request(cut_off):
        send(page, "hi")
    page.reload()
    page.wait_for_selector(REPLY_DONE)
    assert _stored(page, "left") == "yes"
    assert _stored(page, "reports") is None
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)


def test_a_failed_refresh_after_a_reply_is_told_not_thrown(page, server, model):
    """The session list refreshed after a reply fails for real (the page stays): the person sees
    why in a toast, and no uncaught rejection reaches the page (the fixture fails on one)."""
    model.chat.append(replies.text("Hello there."))
    open_page(page, server)
    page.route("**/api/sessions?persona_id=*", lambda route: route.abort())
    send(page, "hi")
    expect(page.locator("#toast.toast-error")).to_have_text(
        "The server could not be reached. Check that it is running.")


def _cut_off_server():
    """A server that answers every request with headers and the first bytes of a JSON body
    promised longer, then resets the connection: a body cut off mid-read."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 4096\r\nAccess-Control-Allow-Origin: *\r\n\r\n"
                             b'{"personas": [')
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    threading.Thread(target=serve, daemon=True).start()
    return listener


def test_a_body_cut_off_mid_read_is_an_unreachable_server(module_page):
    """The answer's headers arrive, then the connection drops: reading the body fails like a
    failed fetch and must be told the same way, never as the browser's raw 'Failed to fetch'."""
    listener = _cut_off_server()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/api/personas"
        module_page.route("**/api/personas", lambda route: route.continue_(url=url))
        module_page.evaluate(_REQUEST, "/api/personas")
        module_page.wait_for_function("() => sessionStorage.getItem('outcome') !== null")
    finally:
        listener.close()
    assert _stored(module_page, "outcome") == (
        "network_error: The server could not be reached. Check that it is running.")
