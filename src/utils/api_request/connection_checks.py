"""Checking an endpoint before anything is stored: a new key, or "Test connection".

Mixed into `ApiClient`; every check uses a temporary SDK client without retries, so a wrong
URL or key answers at once and nothing of the app's clients changes.
"""
from __future__ import annotations

import anthropic

from ..logsafe import register_secret
from .context_window import Connection
from .errors import failure, from_exception
from .openai_backend import OpenAIBackend
from .openai_errors import failure as openai_failure, from_exception as openai_from_exception
from .probe import probe_openai
from .sdk import sdk_options
from .types import ApiResponse


class ConnectionChecks:
    """`check_openai_key` and `test_connection` (needs `timeout` and `_env_base_url`)."""

    timeout: float
    _env_base_url: str | None

    def check_openai_key(self, key: str, base_url: str | None) -> ApiResponse:
        """Validates a key for an OpenAI-compatible endpoint with `GET /models` (costs nothing)."""
        if not base_url:
            problem = openai_failure("not_configured", "set the base URL first")
            return ApiResponse(False, error=problem.code, error_message=problem.message)
        register_secret(key)
        backend = OpenAIBackend(base_url, key, self.timeout, 0)
        try:
            backend.models()
        except Exception as exc:
            problem = openai_from_exception(exc, key)
            return ApiResponse(False, error=problem.code, error_message=problem.message,
                               retryable=problem.retryable)
        finally:
            backend.close()
        return ApiResponse(success=True)

    def test_connection(self, connection: Connection, model: str | None) -> dict:
        """What the endpoint offers (see probe.py); Anthropic: the model list and key check."""
        register_secret(connection.api_key)
        if connection.provider == "openai_compatible":
            if not connection.base_url:
                problem = openai_failure("not_configured")
                return {"reachable": False, "models": [], "context_window": None,
                        "tools": {"non_streaming": False, "streaming": False},
                        "error": {"code": problem.code, "message": problem.message}}
            return probe_openai(connection.base_url, connection.api_key, model, self.timeout)
        return self._test_anthropic(connection)

    def _test_anthropic(self, connection: Connection) -> dict:
        report = {"reachable": False, "models": [], "context_window": 200_000,
                  "tools": {"non_streaming": False, "streaming": False}}
        if not connection.api_key:
            problem = failure("not_configured")
            return {**report, "error": {"code": problem.code, "message": problem.message}}
        try:
            with anthropic.Anthropic(**sdk_options(connection.api_key, connection.base_url
                                                   or self._env_base_url, self.timeout, 0)) as sdk:
                models = sorted(model.id for model in sdk.models.list().data)
        except Exception as exc:
            problem = from_exception(exc, connection.api_key)
            return {**report, "reachable": problem.code not in ("connection_error", "timeout"),
                    "error": {"code": problem.code, "message": problem.message}}
        return {**report, "reachable": True, "models": models,
                "tools": {"non_streaming": True, "streaming": True}}
