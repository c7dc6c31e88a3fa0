"""The prompt inspector's tests: the app talks to the HTTP fakes (Claude, or FakeOpenAI where a
test runs on both providers) over a real WebSocket."""
import pytest

from tests.chat.chat_support import live_config
from tests.chat.conftest import claude, rows  # noqa: F401


@pytest.fixture
def app_config(app_config, claude):  # noqa: F811  (chat's claude, per provider)
    return live_config(app_config, claude)
