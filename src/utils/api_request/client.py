"""`ApiClient`: the app's one door to Claude, returning our own types and stable error codes.

The SDK client is rebuilt whenever the key changes; each call takes a reference under the lock,
so a request in flight finishes on the client it started with. The SDK's own retries and
timeouts are used as configured.

Seed 000's surface lives here, exactly: `ApiClient` with `tool_request()`, the static
`_extract_text_from_content()`, the `ToolExecutor` alias and `MAX_TOOL_ROUNDS`; the SDK client is
built through the name `anthropic` of this module (replacing `client.anthropic` replaces the SDK)
and `ApiClient.client` is the SDK client in use. Responses are read by attribute or as dicts, so
plain objects with `type`/`text`/`id`/`name`/`input` blocks and `input_tokens`/`output_tokens`
usage work as well as the SDK's models.

One deliberate difference from the seed: on failure `ApiResponse.error` is a stable code
(`not_configured`, `rate_limited`, `credit_balance_exhausted`, … DESIGN §4) and the text for
people is in `error_message`; the seed put `str(exception)` into `error`. A second provider (an
OpenAI-compatible endpoint) fits behind the same methods: only `_new_sdk` and the converters
(`anthropic.py`, `openai.py`) know a provider's shapes.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Iterator

import anthropic

from ..logsafe import register_secret
from .anthropic import message_dict, text_of, usage_dict
from .errors import ApiFailure, failure, from_exception
from .handler import ToolHandler
from .request_builder import build_kwargs
from .sdk import sdk_options
from .stream_run import error_event, run_stream
from .tool_loop import ToolLoop
from .types import (DEFAULT_MODEL, MAX_TOOL_ROUNDS, ApiResponse, RequestConfig, StreamEvent,
                    ToolExecutor)

__all__ = ["ApiClient", "MAX_TOOL_ROUNDS", "ToolExecutor", "anthropic"]
log = logging.getLogger(__name__)


class ApiClient:
    """Sends requests to the Messages API: plain, streaming, and with a tool_use loop."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, default_model: str | None = None):
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.default_model = default_model or DEFAULT_MODEL
        self._lock = threading.Lock()
        self._key: str | None = None
        self._sdk: Any = None
        self.set_api_key(api_key)

    @property
    def is_ready(self) -> bool:
        """Whether a key is configured (not whether it is valid: see `check_key`)."""
        return self._sdk is not None

    @property
    def client(self) -> Any:
        """The SDK client in use (None without a key), as the seed names it."""
        return self._current()[0]

    @client.setter
    def client(self, sdk: Any) -> None:
        with self._lock:
            self._sdk = sdk

    @staticmethod
    def _extract_text_from_content(content) -> str:
        """The text blocks of a response's content joined by newlines; '' for None or empty."""
        return text_of(content)

    def set_api_key(self, key: str | None) -> None:
        """Uses `key` from now on (None or "" forgets it); requests in flight are not disturbed."""
        key = key.strip() if key else None
        register_secret(key)
        sdk = self._new_sdk(key) if key else None
        with self._lock:
            self._key, self._sdk = key, sdk

    def close(self) -> None:
        """Releases the HTTP connections of the current SDK client."""
        with self._lock:
            sdk = self._sdk
        if sdk is not None:
            sdk.close()

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def request(self, config: RequestConfig) -> ApiResponse:
        """One non-streaming request; the text of the reply (without the prefill) in `content`."""
        sdk, key = self._current()
        if sdk is None:
            return _failed(failure("not_configured"))
        try:
            response = sdk.messages.create(**build_kwargs(config, self._model(config)))
        except Exception as exc:
            return _failed(from_exception(exc, key))
        return ApiResponse(success=True, content=text_of(response.content),
                           usage=usage_dict(response.usage), raw_response=message_dict(response),
                           stop_reason=response.stop_reason)

    def stream(self, config: RequestConfig, cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        """Yields `chunk`s as they arrive, then exactly one `done` or `error`.

        With `config.tools`, tool calls also stream as `segment` events and `done` carries
        `tool_calls` and `invalid_tool_calls`. Setting `cancel` closes the upstream connection
        and ends the stream with `done` (stop_reason "cancelled", the partial text).
        """
        sdk, key = self._current()
        if sdk is None:
            yield error_event(failure("not_configured"))
            return
        kwargs = build_kwargs(config, self._model(config))
        yield from run_stream(sdk, kwargs, cancel, bool(config.tools), key)

    def tool_request(self, config: RequestConfig, executor: ToolExecutor | ToolHandler) -> ApiResponse:
        """Runs the tool_use loop (seed 000) with `executor(name, input) -> (ok, text)` or a ToolHandler."""
        sdk, key = self._current()
        if sdk is None:
            return _failed(failure("not_configured"))
        return ToolLoop(sdk.messages.create, config, self._model(config), executor, key).run()

    def check_key(self, key: str) -> ApiResponse:
        """Validates `key` with one tiny request on a temporary client, before anyone stores it."""
        key = (key or "").strip()
        if not key:
            return _failed(failure("not_configured"))
        register_secret(key)
        config = RequestConfig(system_prompt="", messages=[{"role": "user", "content": "Hi"}],
                               max_tokens=1, request_type="check_key")
        try:
            with self._new_sdk(key, max_retries=0) as sdk:
                response = sdk.messages.create(**build_kwargs(config, self.default_model))
        except Exception as exc:
            return _failed(from_exception(exc, key))
        return ApiResponse(success=True, usage=usage_dict(response.usage), stop_reason=response.stop_reason)

    def _new_sdk(self, key: str, max_retries: int | None = None) -> Any:
        """An SDK client built through this module's `anthropic` name (seed 000's seam)."""
        retries = self.max_retries if max_retries is None else max_retries
        return anthropic.Anthropic(**sdk_options(key, self.base_url, self.timeout, retries))

    def _current(self) -> tuple[Any, str | None]:
        with self._lock:
            return self._sdk, self._key

    def _model(self, config: RequestConfig) -> str:
        return config.model or self.default_model


def _failed(problem: ApiFailure) -> ApiResponse:
    return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                       retryable=problem.retryable)
