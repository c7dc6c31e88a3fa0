"""First start without an API key: the chat asks for one, checks it, and only then lets you chat;
personas and the cortex editor work without a key."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import API_KEY
from tests.browser.support import open_page

pytestmark = pytest.mark.browser


@pytest.fixture
def api_key():
    """No key in the environment: a first start."""
    return None


def test_wrong_key_is_explained_and_right_key_unlocks_the_chat(page, server, claude, model):
    open_page(page, server)
    expect(page.locator("#key-setup")).to_be_visible()
    expect(page.locator("#key-input")).to_be_focused()
    expect(page.locator("#composer-input")).to_be_disabled()

    page.fill("#key-input", "sk-ant-this-key-is-wrong-0000")
    page.click("#key-submit")
    expect(page.locator("#key-error")).to_contain_text("not accepted by Anthropic")
    expect(page.locator("#key-input")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#key-setup")).to_be_visible()
    assert page.request.get(server.url + "/api/settings").json()["api_key"]["configured"] is False

    page.fill("#key-input", API_KEY)
    page.press("#key-input", "Enter")
    expect(page.locator("#key-setup")).to_be_hidden()
    expect(page.locator("#composer-input")).to_be_enabled()
    status = page.request.get(server.url + "/api/settings").json()["api_key"]
    assert status == {"configured": True, "last4": API_KEY[-4:], "source": "settings"}
    assert API_KEY not in page.content()
    assert len(claude.requests) == 2


def test_personas_and_cortex_editor_work_without_a_key(page, server):
    open_page(page, server, "/settings")
    expect(page.locator("#key-status")).to_contain_text("Not set")
    expect(page.locator("#persona-cards .persona-card")).to_have_count(1)
    assert page.input_value("#cortex-text").startswith("#")
    page.fill("#cortex-text", "# Memories\n\n- Written before any key was set.\n")
    page.click("#cortex-save")
    expect(page.locator("#cortex-status")).to_contain_text("Saved as version #")
    stored = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    assert stored["content"] == "# Memories\n\n- Written before any key was set.\n"
