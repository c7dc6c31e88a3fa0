"""Fixtures for the robustness tests: as in tests/cortex, the app talks to the Claude fake with a
key set; no background worker unless a test asks for one."""
import pytest

from tests.cortex.update_support import KEY


@pytest.fixture
def app_config(app_config, claude):
    """The app talks to the Claude fake with a key set (tests/cortex/update_support.py)."""
    return {**app_config, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": claude.url}


@pytest.fixture
def server_env(claude, key_hygiene, data_dir):
    """The environment of a server process (tests/robustness/servers.py): the Claude fake with
    a key, one worker; key hygiene watches the key in its output and the data directory."""
    key = "sk-ant-robustness-servers-0123456789"
    key_hygiene.add_secret(key)
    yield {"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": claude.url, "PERSONA_WORKERS": "1"}
    key_hygiene.add_data_dir(data_dir)
