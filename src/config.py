"""Configuration: defaults, then the environment (and an optional `.env`), then a test mapping."""
import os
from typing import Any

from dotenv import dotenv_values

DEFAULT_MODEL = "claude-sonnet-5-5"

# Flask config key -> environment variable.
ENV_KEYS = {
    "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL": "ANTHROPIC_BASE_URL",
    "DATA_DIR": "PERSONA_DATA_DIR",
    "HOST": "PERSONA_HOST",
    "PORT": "PERSONA_PORT",
    "MODEL": "PERSONA_MODEL",
    "ACCESS_TOKEN": "PERSONA_ACCESS_TOKEN",
    "LOG_LEVEL": "PERSONA_LOG_LEVEL",
    "LOG_PROMPTS": "PERSONA_LOG_PROMPTS",
    "PROVIDER": "PERSONA_PROVIDER",
    "OPENAI_BASE_URL": "OPENAI_BASE_URL",
    "OPENAI_API_KEY": "OPENAI_API_KEY",
    "MEMORY_PROCESS": "PERSONA_MEMORY_PROCESS",
    "REPLY_CHECKPOINT_SECONDS": "PERSONA_REPLY_CHECKPOINT_SECONDS",
}


def defaults(instance_path: str) -> dict:
    """The built-in configuration; user data lives in the instance folder unless told otherwise."""
    return {
        "ANTHROPIC_API_KEY": None,
        "ANTHROPIC_BASE_URL": None,
        "ANTHROPIC_TIMEOUT": 60.0,
        "ANTHROPIC_MAX_RETRIES": 2,
        "PROVIDER": "anthropic",
        "OPENAI_BASE_URL": None,
        "OPENAI_API_KEY": None,
        "DATA_DIR": instance_path,
        "HOST": "127.0.0.1",
        "PORT": 5000,
        "MODEL": DEFAULT_MODEL,
        "ACCESS_TOKEN": None,
        "LOG_LEVEL": "INFO",
        "LOG_PROMPTS": False,
        "CORTEX_WORKER": True,
        "MEMORY_PROCESS": False,  # `python -m src.app` sets it for its workers (serve.py)
        "REPLY_CHECKPOINT_SECONDS": 5.0,
        "MAX_CONTENT_LENGTH": 1024 * 1024,
        "MAX_UPLOAD_LENGTH": 17 * 1024 * 1024,
    }


def from_environment(dotenv_path: str = ".env") -> dict:
    """Values set in the process environment win over those in `.env`."""
    file_values = dotenv_values(dotenv_path) if os.path.isfile(dotenv_path) else {}
    found: dict[str, Any] = {}
    for key, env_name in ENV_KEYS.items():
        value = os.environ.get(env_name, file_values.get(env_name))
        if value not in (None, ""):
            found[key] = value
    if "PORT" in found:
        found["PORT"] = int(found["PORT"])
    if "REPLY_CHECKPOINT_SECONDS" in found:
        found["REPLY_CHECKPOINT_SECONDS"] = float(found["REPLY_CHECKPOINT_SECONDS"])
    for flag in ("LOG_PROMPTS", "MEMORY_PROCESS"):
        if flag in found:
            found[flag] = found[flag].strip().lower() in ("1", "true", "yes", "on")
    return found


def load(instance_path: str, overrides: dict | None) -> dict:
    """Defaults, then the environment; a test mapping replaces the environment entirely."""
    config = defaults(instance_path)
    config.update(from_environment() if overrides is None else overrides)
    return config
