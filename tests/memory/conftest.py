"""Fixtures for the memory life-cycle tests: the app talks to the Claude fake; no background
worker (each test runs the cortex worker's pass itself, so every step is observable)."""
import pytest

from tests.chat.chat_support import Script, live_config
from tests.memory.support import Conversation


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


@pytest.fixture
def convo(app, client, claude):
    """A `Conversation` over the app's routes, with a script for the fake."""
    return Conversation(app, client, claude, Script(claude))
