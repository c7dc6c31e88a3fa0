"""The chat tests' fakes (`claude`, parametrisable per provider) and reply script."""
from tests.chat.conftest import claude, rows  # noqa: F401
