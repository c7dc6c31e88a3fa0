"""Model output is untrusted: scripts, event handlers and javascript: links arrive inert, and the
pages forbid inline script through their Content-Security-Policy. Every page fixture also fails on
any CSP violation reported to the page's document (tests/browser/conftest.py), so hostile output
must not even make an inline handler reach an HTML parser (docs/security.md)."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import checked_page
from tests.browser.support import LAST_REPLY, REPLY_DONE, open_page, send
from tests.fakes.claude import replies

pytestmark = pytest.mark.browser

HOSTILE = (
    "Look at this:\n\n<script>window.__pwned = 'script'</script>\n\n"
    "<img src=x onerror=\"window.__pwned = 'img'\">\n\n"
    "[click me](javascript:window.__pwned='link')\n\n"
    "<a href=\"javascript:window.__pwned='anchor'\">raw anchor</a>\n\n"
    "<iframe srcdoc=\"<script>parent.__pwned='frame'</script>\"></iframe>\n\n"
    "<svg onload=\"window.__pwned='svg'\"></svg> and [a real link](https://example.org/)\n\n"
    "[title trick](https://example.org/t \"x\\\" onmouseover=\\\"window.__pwned='title'\")\n\n"
    "![alt trick\" onerror=\"window.__pwned='alt'](/nothing.png)\n\n"
    "```x\" onload=\"window.__pwned='lang'\ncode\n```\n"
)
HANDLER_ATTRIBUTES = """() => [...document.querySelectorAll('#messages *')].flatMap(
  (el) => [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name))"""


def test_hostile_model_output_is_shown_inert(page, server, model):
    model.chat.append(replies.text(HOSTILE))
    open_page(page, server)
    send(page, "Show me something dangerous")
    page.wait_for_selector(REPLY_DONE)
    reply = page.locator(LAST_REPLY)
    expect(reply).to_contain_text("Look at this:")
    expect(reply).to_contain_text("<script>window.__pwned = 'script'</script>")
    expect(reply).to_contain_text("<img src=x onerror=")

    for link_text in ("click me", "raw anchor"):
        link = reply.get_by_text(link_text)
        href = link.get_attribute("href")
        assert href is None or not href.strip().lower().startswith("javascript:"), href
        link.click()
    real = reply.get_by_role("link", name="a real link")
    expect(real).to_have_attribute("href", "https://example.org/")
    expect(real).to_have_attribute("rel", "noopener noreferrer nofollow")
    dangerous = reply.locator(".msg-body").locator("script, iframe, svg, [onerror], [onload]")
    assert dangerous.count() == 0
    assert page.evaluate(HANDLER_ATTRIBUTES) == []
    reply.get_by_role("link", name="title trick").hover()
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_pages_send_a_strict_content_security_policy(page, server):
    for path in ("/", "/settings", "/api/docs"):
        response = page.goto(server.url + path)
        policy = response.headers["content-security-policy"]
        for directive in ("script-src 'self'", "object-src 'none'", "base-uri 'none'",
                          "frame-ancestors 'none'"):
            assert directive in policy
        assert "unsafe-inline" not in policy
        assert page.locator("script:not([src])").count() == 0


def test_hostile_cortex_text_is_previewed_inert(page, server):
    """The cortex editor's preview renders through the same path: a handler the model (or a file
    edited on disk) put into memory.md is shown as text and reaches no parser as markup."""
    open_page(page, server, "/settings")
    page.fill("#cortex-text", "# Memories\n\n- likes <b onmouseover=\"window.__pwned='b'\">tea</b>\n\n"
              "<img src=x onerror=\"window.__pwned='img'\">\n")
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#cortex-preview")
    expect(preview).to_contain_text("likes <b onmouseover=")
    expect(preview).to_contain_text("<img src=x onerror=")
    assert preview.locator("b, img, [onmouseover], [onerror]").count() == 0
    preview.hover()
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_a_handler_reaching_the_live_document_fails_the_page_check(browser, server):
    """The guard every page fixture applies is no console-text match: an inline handler that
    reaches the live document is refused by the CSP, reported as a `securitypolicyviolation`
    event, and fails the test, whatever the browser prints."""
    with pytest.raises(AssertionError, match=r"CSP violation.*script-src"), \
            checked_page(browser) as tab:
        tab.goto(server.url + "/signin")
        tab.evaluate("""() => { document.body.insertAdjacentHTML('beforeend',
            '<img src="data:," onload="window.__pwned = 1">'); }""")
        tab.wait_for_function("() => document.querySelector('img[onload]').complete")
        assert tab.evaluate("typeof window.__pwned") == "undefined"
