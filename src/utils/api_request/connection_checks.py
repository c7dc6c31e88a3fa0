"""Checking an endpoint before anything is stored: a new key, or "Test connection".

Mixed into `ApiClient`, and on their own as `EndpointChecks` (what the settings service checks a
new key with: the app's ApiClient reads its connection from the settings service, so the
settings service cannot hold that client). Every check uses a temporary SDK client without
retries, so a wrong URL or key answers at once and nothing of the app's clients changes.
"""
from __future__ import annotations

import anthropic

from ..logsafe import register_secret
from .anthropic import usage_dict
from .deadline import Deadline
from .errors import failure, from_exception
from .openai_backend import OpenAIBackend
from .openai_errors import failure as openai_failure, from_exception as openai_from_exception
from .probe import (
    BUDGET,
    NotAModelList,
    empty_report,
    list_openai_models,
    model_entries,
    probe_error,
    probe_openai,
    status_of,
)
from .request_builder import build_kwargs
from .sdk import sdk_options
from .types import DEFAULT_MODEL, ApiResponse, Connection, RequestConfig


class ConnectionChecks:
    """`check_key`, `check_openai_key`, `test_connection` and `list_models` (needs `timeout`,
    `default_model` and `_env_base_url`)."""

    timeout: float
    default_model: str
    _env_base_url: str | None

    def check_key(self, key: str, base_url: str | None = None) -> ApiResponse:
        """Validates an Anthropic `key` with one tiny request, before anyone stores it; at
        `base_url` (where it will be sent; None: the environment's, else the official URL)."""
        key = (key or "").strip()
        if not key:
            problem = failure("not_configured")
            return ApiResponse(False, error=problem.code, error_message=problem.message)
        register_secret(key)
        options = sdk_options(key, base_url or self._env_base_url, self.timeout, 0)
        try:
            with anthropic.Anthropic(**options) as sdk:
                response = sdk.messages.create(**build_kwargs(_PING, self.default_model))
        except Exception as exc:
            problem = from_exception(exc, key)
            return ApiResponse(False, error=problem.code, error_message=problem.message,
                               retryable=problem.retryable)
        return ApiResponse(success=True, usage=usage_dict(response.usage),
                           stop_reason=response.stop_reason)

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
        """What the endpoint offers (see probe.py); Anthropic: the model list, and one tiny
        request with the model chats use (which checks the key and the model)."""
        register_secret(connection.api_key)
        if connection.provider == "openai_compatible":
            if not connection.base_url:
                return {**empty_report(), "error": probe_error(openai_failure("not_configured"),
                                                               None, False)}
            return probe_openai(connection.base_url, connection.api_key, model, self.timeout)
        return self._test_anthropic(connection, model or self.default_model)

    def list_models(self, connection: Connection) -> dict:
        """`{models, error?}`: the ids the endpoint's `/models` lists (for the settings page's
        suggestions), under the same rules as the probe (no redirects, a real model list
        only, our own error words, the time budget)."""
        register_secret(connection.api_key)
        if connection.provider == "openai_compatible":
            if not connection.base_url:
                return {"models": [], "error": probe_error(openai_failure("not_configured"),
                                                           None, False)}
            return list_openai_models(connection.base_url, connection.api_key, self.timeout)
        if not connection.api_key:
            return {"models": [], "error": _not_configured()}
        deadline, options = self._probe_options(connection.api_key, connection.base_url)
        try:
            with anthropic.Anthropic(**options) as sdk:
                models = _model_ids(sdk)
        except NotAModelList:
            return {"models": [], "error": {"code": "api_error", "message": NOT_THE_API}}
        except Exception as exc:
            problem = from_exception(exc, connection.api_key)
            return {"models": [], "error": probe_error(problem, status_of(exc),
                                                       deadline.expired, failure)}
        finally:
            deadline.close()
        return {"models": models}

    def _test_anthropic(self, connection: Connection, model: str) -> dict:
        report = {**empty_report(), "context_window": 200_000, "model": model}
        if not connection.api_key:
            return {**report, "error": _not_configured()}
        deadline, options = self._probe_options(connection.api_key, connection.base_url)
        try:
            with anthropic.Anthropic(**options) as sdk:
                report = {**report, "reachable": True, "models": _model_ids(sdk)}
                sdk.messages.create(**build_kwargs(_PING, model))
        except NotAModelList:
            return {**report, "error": {"code": "api_error", "message": NOT_THE_API}}
        except Exception as exc:
            problem = from_exception(exc, connection.api_key)
            reachable = report["reachable"] or problem.code == "authentication_failed"
            return {**report, "reachable": reachable,
                    "error": probe_error(problem, status_of(exc), deadline.expired, failure)}
        finally:
            deadline.close()
        return {**report, "tools": {"non_streaming": True, "streaming": True}}

    def _probe_options(self, key: str, base_url: str | None) -> tuple[Deadline, dict]:
        """A probe's SDK options (no retries) with every request under one time budget; the
        caller closes the deadline once the client is done."""
        deadline = Deadline(min(self.timeout, BUDGET))
        options = sdk_options(key, base_url or self._env_base_url, deadline.remaining(), 0,
                              event_hooks=deadline.hooks())
        return deadline, options


def _not_configured() -> dict:
    """The probe error for an Anthropic connection without a key."""
    return probe_error(failure("not_configured"), None, False, failure)


def _model_ids(sdk: anthropic.Anthropic) -> list[str]:
    """The sorted model ids the endpoint lists (NotAModelList when it does not answer a list)."""
    raw = sdk.models.with_raw_response.list()
    return sorted({entry["id"] for entry in model_entries(raw, "model")})


NOT_THE_API = ("The base URL answered, but not like the Anthropic API: check it (it has no /v1 "
               "at the end).")
_PING = RequestConfig(system_prompt="", messages=[{"role": "user", "content": "Hi"}],
                      max_tokens=1, request_type="check_key")


class EndpointChecks(ConnectionChecks):
    """The checks without a client of their own: built from the configuration alone."""

    def __init__(self, timeout: float, default_model: str | None = None,
                 env_base_url: str | None = None):
        self.timeout = timeout
        self.default_model = default_model or DEFAULT_MODEL
        self._env_base_url = env_base_url
