"""Comfort in the chat: code blocks with syntax colours and a Copy button (model output stays
inert), and a manual theme (system, light, dark) that holds across pages and reloads."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import checked_page
from tests.browser.support import REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

CODE = 'def greet(name):\n    # say hello\n    return f"Hello {name}"\n'
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def test_code_blocks_are_highlighted_and_copied(browser, server, model):
    model.chat.append(replies.text(f"Here:\n\n```python\n{CODE}```\n\nand\n\n```\n{HOSTILE}\n```\n"))
    with checked_page(browser, viewport={"width": 1280, "height": 860}) as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        open_page(page, server)
        send(page, "Show me code")
        page.wait_for_selector(REPLY_DONE)
        block = page.locator("#messages .code-block").first
        expect(block.locator(".code-lang")).to_have_text("Python")
        expect(block.locator(".hljs-keyword").first).to_have_text("def")
        expect(block.locator(".hljs-comment")).to_have_text("# say hello")
        block.get_by_role("button", name="Copy Python code").click()
        expect(block.locator(".code-copy")).to_contain_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == CODE

        hostile = page.locator("#messages .code-block").nth(1)
        expect(hostile.locator("code")).to_have_text(HOSTILE)
        assert page.locator("#messages script, #messages img").count() == 0
        assert page.evaluate("window.pwned") is None


def _background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_manual_theme_overrides_the_system_and_holds(browser, server):
    with checked_page(browser, color_scheme="light") as page:
        open_page(page, server, "/settings")
        light = _background(page)
        page.select_option("#set-theme", "dark")
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        dark = _background(page)
        assert dark != light and dark == "rgb(17, 17, 20)"
        open_page(page, server, "/")
        assert _background(page) == dark
        response = page.request.get(server.url + "/")
        assert 'data-theme="dark"' in response.text()

        open_page(page, server, "/settings")
        expect(page.locator("#set-theme")).to_have_value("dark")
        page.select_option("#set-theme", "system")
        expect(page.locator("html")).not_to_have_attribute("data-theme", "dark")
        assert _background(page) == light

    with checked_page(browser, color_scheme="dark") as page:
        open_page(page, server, "/settings")
        page.select_option("#set-theme", "light")
        assert _background(page) == "rgb(246, 246, 248)"
