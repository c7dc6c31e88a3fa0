"""Browser tests: real headless Chromium (Playwright) against the app on a real server, with the
Claude fake upstream. One browser per test session, a fresh context (cookies, storage) per test."""
import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser.support import Model
from tests.fakes.claude import replies
from tests.support.chromium import CHROMIUM

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
API_KEY = "sk-ant-test-accepted-key-7f3a"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TIMEOUT_MS = 15000
# `expect` has its own default (5 s), which the context's timeout does not change; it gets the
# same bound as every other wait of a page, for a loaded machine. A passing check returns as
# soon as it holds, so only a failure waits the longer bound.
expect.set_options(timeout=TIMEOUT_MS)
# Chromium reports every non-2xx fetch on the console; the tests provoke some on purpose.
_EXPECTED_CONSOLE = ("Failed to load resource",)
# CSP violations are judged by the events the page's document receives (below), not by the
# wording a browser version prints on the console.
_CSP_CONSOLE = "violates the following Content Security Policy"
_REPORT_CSP_VIOLATIONS = """
document.addEventListener('securitypolicyviolation', (event) => window.__cspViolation({
  directive: event.effectiveDirective, blocked: event.blockedURI, sample: event.sample,
  source: `${event.sourceFile}:${event.lineNumber}`, document: event.documentURI,
}));
"""


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole test session."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def api_key():
    """The key the app starts with (the first-run tests override this with None)."""
    return API_KEY


@pytest.fixture
def app_config(app_config, claude, api_key):
    """The app talks to the Claude fake, which accepts only API_KEY."""
    claude.api_key = API_KEY
    return {**app_config, "ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": api_key}


@pytest.fixture
def model(claude):
    """The scripted model answering every request the app sends to the fake."""
    scripted = Model()
    claude.default = replies.scripted(scripted)
    return scripted


@contextmanager
def checked_page(browser, expected_console: tuple = (), problems: list | None = None, **options):
    """A page in a fresh context; a script error, a console error, or a Content-Security-Policy
    violation reported to any document it loads fails the test (console errors starting with one
    of `expected_console` are provoked on purpose and allowed). A caller that shares the page
    between tests passes `problems` and checks the new entries after each test."""
    expected = _EXPECTED_CONSOLE + tuple(expected_console)
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    problems = [] if problems is None else problems
    context.expose_function("__cspViolation", lambda v: problems.append(f"CSP violation: {v}"))
    context.add_init_script(_REPORT_CSP_VIOLATIONS)
    tab = context.new_page()
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    tab.on("console", lambda msg: problems.append(f"console: {msg.text}")
           if msg.type == "error" and not msg.text.startswith(expected)
           and _CSP_CONSOLE not in msg.text else None)
    try:
        yield tab
        settle(tab)
    finally:
        context.close()
    assert not problems, problems


def settle(tab) -> None:
    """One round trip to the page, so violation reports it queued before now have arrived."""
    if not tab.is_closed():
        tab.evaluate("() => new Promise((resolve) => setTimeout(resolve, 0))")


@pytest.fixture
def page(browser):
    """A desktop-sized page (1280 × 860)."""
    with checked_page(browser, viewport={"width": 1280, "height": 860}) as tab:
        yield tab


@pytest.fixture
def phone(browser):
    """A 375 px wide page (a phone-sized, touch viewport)."""
    with checked_page(browser, viewport={"width": 375, "height": 740}, device_scale_factor=2,
                       is_mobile=True, has_touch=True) as tab:
        yield tab


@pytest.fixture(scope="session")
def artifacts():
    """Where screenshots go (gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
