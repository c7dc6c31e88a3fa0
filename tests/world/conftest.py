"""The chat tests' fakes (`claude`, parametrisable per provider) and reply script (`script`,
from tests/conftest.py, scripts whichever `claude` this directory uses)."""
from tests.chat.conftest import claude, rows  # noqa: F401
