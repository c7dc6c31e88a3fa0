"""Fixtures for the cortex tests: the app talks to the Claude fake with a key set (`env`, the
services plus set-up helpers, is in tests/conftest.py; helpers in update_support.py)."""
import pytest

from tests.cortex.update_support import KEY


@pytest.fixture
def app_config(app_config, claude):
    """The app talks to the Claude fake with a key set; no background worker unless asked."""
    return {**app_config, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": claude.url}
