"""Fixtures for the robustness tests: as in tests/cortex, the app talks to the Claude fake with a
key set; no background worker unless a test asks for one."""
import pytest

from tests.cortex.update_support import KEY

LOG_TAIL = 8000  # characters of a server's log in a failing test's report


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report carries the end of each server process's log it used: what a
    worker warned about (a refusal, a crash) is the first clue when CI alone sees the failure."""
    from tests.robustness.servers import ServerProcess
    report = yield
    if report.failed:
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, ServerProcess) and value.log_path.exists():
                report.sections.append((f"server log ({name})", value.log()[-LOG_TAIL:]))
    return report

