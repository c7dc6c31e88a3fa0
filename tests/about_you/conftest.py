"""The "About you" tests: the app talks to the HTTP fakes (Claude, or FakeOpenAI where a test
runs on both providers); the cortex worker runs in the test's thread."""
import pytest

from tests.chat.chat_support import Script, live_config
from tests.chat.conftest import claude, rows  # noqa: F401
from tests.memory.support import Conversation


@pytest.fixture
def app_config(app_config, claude):  # noqa: F811  (chat's claude, per provider)
    return live_config(app_config, claude)


@pytest.fixture
def convo(app, client, claude):  # noqa: F811
    """A `Conversation` over the app's routes, with a script for the fake."""
    return Conversation(app, client, claude, Script(claude))
