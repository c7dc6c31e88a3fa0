"""`/api/docs`: the vendored Swagger UI renders the app's OpenAPI document in Chromium, under the
pages' strict CSP (any violation fails the page fixture), from this server alone, behind the same
access gate as the other pages."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import checked_page

pytestmark = pytest.mark.browser

DOCS_READY = "body[data-ready=true]"
TOKEN = "pc-access-token-docs-5c1e0a9b7d3f2468"


def _operation(page, method: str, path: str):
    return page.locator(f".opblock-{method.lower()}").filter(
        has=page.locator(f'.opblock-summary-path[data-path="{path}"]'))


def test_api_docs_render_the_chat_and_cortex_routes(page, server):
    hosts = set()
    page.on("request", lambda request: hosts.add(request.url.split("/", 3)[2]))
    page.goto(server.url + "/api/docs")
    page.wait_for_selector(DOCS_READY, state="attached")
    expect(page.locator(".info .title")).to_contain_text("Persona Cortex API")
    for method, path in (("POST", "/api/chat/stream"), ("GET", "/ws/chat"),
                         ("GET", "/api/personas/{pid}/cortex"),
                         ("PUT", "/api/personas/{pid}/cortex/{filename}"),
                         ("POST", "/api/personas/{pid}/cortex/update")):
        expect(_operation(page, method, path)).to_be_visible()

    chat = _operation(page, "POST", "/api/chat/stream")
    chat.locator(".opblock-summary").click()
    expect(chat.locator(".opblock-body")).to_contain_text("text/event-stream")
    assert hosts == {server.url.split("/", 3)[2]}, hosts


def test_try_it_out_calls_this_server(page, server):
    page.goto(server.url + "/api/docs#/personas")
    page.wait_for_selector(DOCS_READY, state="attached")
    personas = _operation(page, "GET", "/api/personas")
    personas.locator(".opblock-summary").click()
    personas.get_by_role("button", name="Try it out").click()
    personas.get_by_role("button", name="Execute").click()
    expect(personas.locator(".live-responses-table tbody .response-col_status").first).to_have_text("200")
    expect(personas.locator(".live-responses-table")).to_contain_text('"id": "default"')



def test_try_it_out_may_change_state_from_this_page(page, server):
    """A POST from the reference passes the origin check like the app's own pages do."""
    page.goto(server.url + "/api/docs#/sessions")
    page.wait_for_selector(DOCS_READY, state="attached")
    create = _operation(page, "POST", "/api/sessions")
    create.locator(".opblock-summary").click()
    create.get_by_role("button", name="Try it out").click()
    create.locator("textarea.body-param__text").fill('{"persona_id": "default"}')
    create.get_by_role("button", name="Execute").click()
    expect(create.locator(".live-responses-table tbody .response-col_status").first).to_have_text("201")
    sessions = page.request.get(server.url + "/api/sessions?persona_id=default").json()["sessions"]
    assert len(sessions) == 1


class TestWithAnAccessToken:
    @pytest.fixture
    def app_config(self, app_config):
        return {**app_config, "ACCESS_TOKEN": TOKEN}

    def test_the_docs_ask_for_the_token_first(self, browser, server):
        with checked_page(browser, viewport={"width": 1280, "height": 860}) as page:
            page.goto(server.url + "/api/docs")
            expect(page).to_have_url(server.url + "/signin?next=/api/docs")
            page.get_by_label("Access token").fill(TOKEN)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_selector(DOCS_READY, state="attached")
            expect(page).to_have_url(server.url + "/api/docs")
            expect(_operation(page, "POST", "/api/chat/stream")).to_be_visible()


def test_the_query_string_cannot_load_another_document(page, server):
    """Swagger UI can take `?url=`/`?configUrl=`; ours ignores them, so a link cannot make the
    page render (and run "Try it out" against) someone else's document."""
    hosts = set()
    page.on("request", lambda request: hosts.add(request.url.split("/", 3)[2]))
    page.goto(server.url + "/api/docs?url=http://example.invalid/evil.json"
              "&configUrl=http://example.invalid/config.json")
    page.wait_for_selector(DOCS_READY, state="attached")
    expect(page.locator(".info .title")).to_contain_text("Persona Cortex API")
    assert hosts == {server.url.split("/", 3)[2]}, hosts
