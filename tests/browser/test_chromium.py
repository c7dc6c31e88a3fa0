"""The run's first line names the Chromium the browser tests drive (issue 10 §1): the version it
prints is the version of the browser Playwright launched."""
import pytest

from tests.support.chromium import chromium_version

pytestmark = pytest.mark.browser


def test_the_named_version_is_the_version_driven(browser):
    named = chromium_version()
    assert named.startswith("Chromium "), named
    assert f"Chromium {browser.version} " in f"{named} ", (named, browser.version)
