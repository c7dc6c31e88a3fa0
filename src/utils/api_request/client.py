"""`ApiClient`: the app's one door to Claude, returning our own types and stable error codes.

The SDK client is rebuilt whenever the key changes; each call takes a reference under the lock,
so a request in flight finishes on the client it started with. With a `key_source` (the app's:
the stored key, else the environment's) the key is looked up before every request and every
round of a tool loop, so a key set or removed by another worker process is used, or no longer
sent, from the next request on. The SDK's own retries and timeouts are used as configured.

Seed 000's surface lives here, exactly: `ApiClient` with `tool_request()`, the static
`_extract_text_from_content()`, the `ToolExecutor` alias and `MAX_TOOL_ROUNDS`; the SDK client is
built through the name `anthropic` of this module (replacing `client.anthropic` replaces the SDK)
and `ApiClient.client` is the SDK client in use. Responses are read by attribute or as dicts, so
plain objects with `type`/`text`/`id`/`name`/`input` blocks and `input_tokens`/`output_tokens`
usage work as well as the SDK's models.

One deliberate difference from the seed: on failure `ApiResponse.error` is a stable code
(`not_configured`, `rate_limited`, `credit_balance_exhausted`, … DESIGN §4) and the text for
people is in `error_message`; the seed put `str(exception)` into `error`. The provider is chosen
once per call (`_route`): the Anthropic or the OpenAI-compatible adapter, handed to the one engine
(`engine.py`, `tool_loop.py`, `stream_run.py`), which knows no provider's shapes.
"""
from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Self

import anthropic

from ..logsafe import register_secret
from . import engine
from .adapter import ProviderAdapter
from .anthropic import text_of
from .anthropic_adapter import AnthropicAdapter
from .client_shelf import ClientShelf
from .connection_checks import ConnectionChecks
from .context_window import fit
from .engine import failed
from .errors import ApiFailure, KeyRemoved, failure, from_exception
from .handler import ToolHandler
from .openai_adapter import OpenAIAdapter
from .openai_backend import OpenAIBackend
from .openai_errors import failure as openai_failure
from .sdk import sdk_options
from .stream_run import error_event
from .types import (
    DEFAULT_MODEL,
    MAX_TOOL_ROUNDS,
    ApiResponse,
    Connection,
    RequestConfig,
    StreamEvent,
    ToolExecutor,
)

__all__ = ["ApiClient", "MAX_TOOL_ROUNDS", "ToolExecutor", "anthropic"]
log = logging.getLogger(__name__)
_CURRENT_URL = object()


def _build_sdk(key: str, base_url: str | None, timeout: float, max_retries: int) -> Any:
    """An SDK client built through this module's `anthropic` name (seed 000's seam). A plain
    function: a shelf's builder that held the `ApiClient` would make the two a reference cycle,
    and the cycle's collector may finalize the connections' sockets before their clients."""
    options = sdk_options(key, base_url, timeout, max_retries)
    sdk = anthropic.Anthropic(**options)
    # An SDK client is a reference cycle: the collector finalizes it together with its
    # connections' sockets, in no fixed order, so a socket could be found unclosed before the
    # client's HTTP client closed it. This callback runs first and holds the HTTP client
    # until it has closed it (a client replaced by a new key, or an app never closed).
    weakref.finalize(sdk, options["http_client"].close)
    return sdk


class ApiClient(ConnectionChecks):
    """Sends requests to the Messages API: plain, streaming, and with a tool_use loop."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, default_model: str | None = None,
                 key_source: Callable[[], str | None] | None = None,
                 connection_source: Callable[[], Connection] | None = None):
        self.base_url = base_url
        self._env_base_url = base_url
        self._connection_source = connection_source
        self._backends: dict[tuple, OpenAIBackend] = {}
        self.timeout = timeout
        self.max_retries = max_retries
        self.default_model = default_model or DEFAULT_MODEL
        self._lock = threading.Lock()
        self._key: str | None = None
        self._sdk: Any = None
        self._shelf: ClientShelf | None = None  # streams' clients for `_sdk`'s key and URL
        self._key_source = key_source
        self.set_api_key(api_key if key_source is None else key_source())

    @property
    def is_ready(self) -> bool:
        """Whether requests can be sent: a key for Anthropic, a base URL for an OpenAI-compatible
        endpoint (local ones need no key). Not whether they will succeed: see `check_key`."""
        connection = self.connection()
        if connection.provider == "openai_compatible":
            return bool(connection.base_url)
        return self._current()[0] is not None

    @property
    def provider(self) -> str:
        """The provider requests go to now."""
        return self.connection().provider

    def connection(self) -> Connection:
        """The endpoint as configured right now (read per request, shared by all workers)."""
        if self._connection_source is None:
            return Connection("anthropic", self.base_url)
        return self._connection_source()

    @property
    def client(self) -> Any:
        """The SDK client in use (None without a key), as the seed names it."""
        return self._current()[0]

    @client.setter
    def client(self, sdk: Any) -> None:
        with self._lock:
            self._sdk, shelf, self._shelf = sdk, self._shelf, None  # streams use `sdk` itself
        if shelf is not None:
            shelf.retire()

    @staticmethod
    def _extract_text_from_content(content: Any) -> str:
        """The text blocks of a response's content joined by newlines; '' for None or empty."""
        return text_of(content)

    def set_api_key(self, key: str | None) -> None:
        """Uses `key` from now on (None or "" forgets it); requests in flight are not disturbed."""
        key = key.strip() if key else None
        register_secret(key)
        sdk = self._new_sdk(key) if key else None
        with self._lock:
            self._key = key
            old = self._install(sdk, key, self.base_url)
        if old is not None:
            old.retire()

    def close(self) -> None:
        """Releases the HTTP connections of the current SDK client and of the streams' idle ones."""
        with self._lock:
            sdk, backends, self._backends = self._sdk, list(self._backends.values()), {}
            shelf, self._shelf = self._shelf, None
        if sdk is not None:
            sdk.close()
        if shelf is not None:
            shelf.close()
        for backend in backends:
            backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, config: RequestConfig) -> ApiResponse:
        """One non-streaming request; the text of the reply (without the prefill) in `content`."""
        route = self._route(config)
        if isinstance(route, ApiFailure):
            return failed(route)
        config, adapter = route
        return engine.request(adapter, config, self._model(config))

    def stream(self, config: RequestConfig, cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        """Yields `chunk`s as they arrive, then exactly one `done` or `error`.

        With `config.tools`, tool calls also stream as `segment` events and `done` carries
        `tool_calls` and `invalid_tool_calls`. Setting `cancel` closes the upstream connection
        and ends the stream with `done` (stop_reason "cancelled", the partial text).
        """
        route = self._route(config)
        if isinstance(route, ApiFailure):
            yield error_event(route)
            return
        config, adapter = route
        yield from engine.stream(adapter, config, self._model(config), cancel)

    def tool_request(self, config: RequestConfig, executor: ToolExecutor | ToolHandler) -> ApiResponse:
        """Runs the tool loop (seed 000) with `executor(name, input) -> (ok, text)` or a
        ToolHandler; every round uses the key and endpoint as they are then."""
        route = self._route(config, live=True)
        if isinstance(route, ApiFailure):
            return failed(route)
        config, adapter = route
        return engine.tool_request(adapter, config, self._model(config), executor)

    def count_tokens(self, model: str, messages: list[dict], system: list[dict] | None = None,
                     timeout: float = 5.0) -> int | None:
        """The provider's own count of a prompt's input tokens (Anthropic's
        `messages.count_tokens`), or None: the provider offers no counting (OpenAI-compatible),
        no key is set, or the count failed or took longer than `timeout` (never retried). The
        caller estimates instead and says so."""
        if self.connection().provider == "openai_compatible":
            return None
        sdk, _ = self._current()
        if sdk is None:
            return None
        extra = {"system": system} if system else {}
        try:
            counted = sdk.with_options(timeout=timeout, max_retries=0).messages.count_tokens(
                model=model, messages=messages, **extra)
        except Exception as exc:
            log.warning("Token counting failed: %s", from_exception(exc, self._key).code)
            return None
        tokens = getattr(counted, "input_tokens", None)
        return tokens if isinstance(tokens, int) and tokens >= 0 else None

    def _new_sdk(self, key: str, max_retries: int | None = None,
                 base_url: str | object | None = _CURRENT_URL) -> Any:
        """An SDK client built through this module's `anthropic` name (seed 000's seam), for
        `base_url` (default: the client's; None: the official URL)."""
        retries = self.max_retries if max_retries is None else max_retries
        url = self.base_url if base_url is _CURRENT_URL else base_url
        return _build_sdk(key, url if isinstance(url, str) else None, self.timeout, retries)

    def _current(self, connection: Connection | None = None) -> tuple[Any, str | None]:
        """The SDK client and key for Anthropic as configured now (or in `connection`, read
        by the caller for this request). With a connection source, URL and key come from one
        read of it (the key that belongs to that URL), so a key is never paired with a URL it
        was not saved for."""
        sdk, key, _ = self._state(connection)
        return sdk, key

    def _state(self, connection: Connection | None = None
               ) -> tuple[Any, str | None, ClientShelf | None]:
        """`_current`, with the shelf of stream clients built for that same key and URL."""
        if self._connection_source is not None:
            connection = connection or self._connection_source()
            if connection.provider != "openai_compatible":
                return self._use(connection.base_url or self._env_base_url, connection.api_key)
        elif self._key_source is not None:
            return self._use(self.base_url, self._key_source())
        with self._lock:
            return self._sdk, self._key, self._shelf

    def _use(self, base_url: str | None, key: str | None
             ) -> tuple[Any, str | None, ClientShelf | None]:
        """`_state` for this URL and key: the SDK client is rebuilt when either changed
        (requests in flight keep theirs); an unchanged pair takes the lock once."""
        key = key.strip() if key else None
        with self._lock:
            if (base_url, key) == (self.base_url, self._key):
                return self._sdk, self._key, self._shelf
        register_secret(key)
        sdk = self._new_sdk(key, base_url=base_url) if key else None
        retired: ClientShelf | None = None
        with self._lock:
            unused = sdk if (base_url, key) == (self.base_url, self._key) else None
            if unused is None:  # else another thread built the same client first
                self.base_url, self._key = base_url, key
                retired = self._install(sdk, key, base_url)
            state = self._sdk, self._key, self._shelf
        if unused is not None:
            unused.close()
        elif retired is not None:
            retired.retire()
        return state

    def _install(self, sdk: Any, key: str | None, base_url: str | None) -> ClientShelf | None:
        """Makes `sdk` the client in use, with a new shelf of stream clients for the same key
        and URL (the caller holds the lock); returns the old shelf for the caller to retire."""
        old, self._sdk = self._shelf, sdk
        self._shelf = ClientShelf(functools.partial(_build_sdk, key, base_url, self.timeout,
                                                    self.max_retries)) if key else None
        return old

    def _route(self, config: RequestConfig, live: bool = False
               ) -> tuple[RequestConfig, ProviderAdapter] | ApiFailure:
        """The request fitted to the window and the adapter of the configured provider (the
        request's own `connection` when its caller read it, else the settings now), or why
        not. `live`: the adapter re-reads the key and endpoint before each later round."""
        connection = config.connection or self.connection()
        fitted = fit(config, connection.window)
        if isinstance(fitted, ApiFailure):
            return fitted
        build = self._openai_adapter if connection.provider == "openai_compatible" \
            else self._anthropic_adapter
        adapter = build(connection, live)
        return adapter if isinstance(adapter, ApiFailure) else (fitted, adapter)

    def _anthropic_adapter(self, connection: Connection, live: bool) -> ProviderAdapter | ApiFailure:
        sdk, key, shelf = self._state(connection)  # the request's one read of settings and key
        if sdk is None:
            return failure("not_configured")
        if live:
            return AnthropicAdapter(self._sdk_now, key, self.timeout)
        return AnthropicAdapter(lambda: sdk, key, self.timeout, shelf)

    def _openai_adapter(self, connection: Connection, live: bool) -> ProviderAdapter | ApiFailure:
        if not connection.base_url:
            return openai_failure("not_configured")
        backend = self.openai_backend(connection)
        return OpenAIAdapter(self._endpoint_now if live else (lambda: backend),
                             connection.api_key, self.timeout, backend.tokens_field)

    def _sdk_now(self) -> Any:
        """The Anthropic SDK client for the key as it is now (a tool loop's later rounds too)."""
        sdk, _ = self._current()
        if sdk is None:
            raise KeyRemoved()
        return sdk

    def openai_backend(self, connection: Connection) -> OpenAIBackend:
        """The backend for this endpoint and key (one per pair, kept while it is in use)."""
        if not connection.base_url:
            raise ValueError("an OpenAI-compatible endpoint needs a base URL")
        register_secret(connection.api_key)
        cache_key = (connection.base_url, connection.api_key)
        with self._lock:  # older pairs stay open for requests in flight; close() ends them all
            backend = self._backends.get(cache_key)
            if backend is None:
                backend = OpenAIBackend(connection.base_url, connection.api_key, self.timeout,
                                        self.max_retries)
                self._backends[cache_key] = backend
        return backend

    def _endpoint_now(self) -> OpenAIBackend:
        """The endpoint and key as they are now (a tool loop's later rounds too)."""
        connection = self.connection()
        if connection.provider != "openai_compatible" or not connection.base_url:
            raise KeyRemoved()
        return self.openai_backend(connection)

    def _model(self, config: RequestConfig) -> str:
        return config.model or self.default_model


