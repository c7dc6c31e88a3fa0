"""Fixtures for the robustness tests: as in tests/cortex, the app talks to the Claude fake with a
key set; no background worker unless a test asks for one."""
import pytest

from tests.cortex.update_support import KEY


@pytest.fixture
def app_config(app_config, claude):
    """The app talks to the Claude fake with a key set (tests/cortex/update_support.py)."""
    return {**app_config, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": claude.url}
