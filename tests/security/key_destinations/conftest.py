"""Fixtures of the key-destination tests (issue 21): the app's keys from the environment, each
bound to its own fake's URL, and a loopback listener recording everything that reaches it."""
import pytest

from tests.support.listener import Listener

from .keys import ENV_KEY, OPENAI_KEY


@pytest.fixture
def app_config(app_config, claude, openai_fake):
    claude.api_key = None
    return {**app_config, "ANTHROPIC_API_KEY": ENV_KEY, "ANTHROPIC_BASE_URL": claude.url,
            "OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": openai_fake.url}


@pytest.fixture
def listener():
    with Listener() as recording:
        yield recording
