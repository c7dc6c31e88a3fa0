"""The SDK client's options, and the two places where we reach below the SDK: retry waits and aborts.

The SDK honours any `retry-after` the server sends, however long. A middleware (the SDK's public
hook, run once per attempt inside its retry loop) marks error responses that ask for a longer wait
than `MAX_RETRY_WAIT` as not retryable, so a person waits at most that long before seeing
`rate_limited` / `overloaded` instead of a silent minute-long hang.
"""
from __future__ import annotations

import email.utils
import functools
import logging
import platform
import socket
import ssl
import time
from typing import Any

import anthropic
import httpx2

log = logging.getLogger(__name__)

MAX_RETRY_WAIT = 10.0


def retry_after_seconds(headers: Any) -> float | None:
    """The wait a response asks for (`retry-after-ms`, `retry-after` seconds or date), if any."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return email.utils.mktime_tz(parsed) - time.time()
    return None


class _BoundedRetryWait(anthropic.Middleware):
    """Refuses retries whose requested wait exceeds the bound (the error then surfaces at once)."""

    def __init__(self, max_wait: float):
        self.max_wait = max_wait

    def handle(self, request: anthropic.APIRequest, call_next: anthropic.CallNext
               ) -> anthropic.APIResponse[Any]:
        response = call_next(request)
        http_response = response.http_response
        if not http_response.is_success:
            wait = retry_after_seconds(http_response.headers)
            if wait is not None and wait > self.max_wait:
                log.info("not retrying: the API asked to wait %.0f s", wait)
                http_response.headers["x-should-retry"] = "false"
        return response


class _NoRedirectClient(anthropic.DefaultHttpxClient):
    """The SDK's default HTTP client, closed when dropped like the one the SDK builds itself
    (a client replaced by a new key or URL may still serve a request in flight, so it is not
    closed at once)."""

    def __del__(self) -> None:
        if not self.is_closed:
            try:
                self.close()
            except Exception:
                log.debug("closing a dropped HTTP client failed", exc_info=True)


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The TLS context of every SDK client of the process, built once as the SDK's default
    client builds its own (the certificate store it trusts, `SSL_CERT_FILE`/`SSL_CERT_DIR` read
    from the environment): loading the store took 26 ms of each client's 26.4 ms, and the app
    builds one client per reply in flight (`client_shelf.py`)."""
    return httpx2.create_ssl_context()


def warm_up(openai_compatible: bool = False) -> None:
    """Does at a worker's boot what the first upstream request would otherwise do inside the
    event loop, where it stalled every connection of the worker (gevent's blocking monitor at
    20 ms, issue #23): the shared TLS context (and the modules its making imports), the
    platform both SDKs name in their headers (`uname -p` in a subprocess, once), and the
    OpenTelemetry propagators the SDK's tracing loads at its first request: 50-80 ms. With
    `openai_compatible` (the configured provider) also the `openai` SDK, which an app on
    Anthropic never loads (13 MiB): its import stalled the first turn about 0.4 s."""
    shared_tls_context()
    platform.platform()
    try:
        import opentelemetry.propagate  # noqa: F401 (what `anthropic._tracing` imports lazily)
    except Exception:  # as the SDK: requests then carry no trace context, nothing fails
        log.debug("No OpenTelemetry propagators to load ahead", exc_info=True)
    if openai_compatible:
        import openai  # noqa: F401


def sdk_options(api_key: str, base_url: str | None, timeout: Any, max_retries: int,
                max_retry_wait: float = MAX_RETRY_WAIT,
                event_hooks: dict | None = None) -> dict[str, Any]:
    """The keyword arguments of `anthropic.Anthropic(...)` for one key (passed explicitly, so no
    other credential is read); `client.py` builds the client from them. Redirects are not
    followed (the SDK's default client follows them): the key goes to `base_url` only, never
    to wherever that answers a 3xx to (DESIGN §15 "Keys")."""
    http_client = _NoRedirectClient(follow_redirects=False, event_hooks=event_hooks or {},
                                    verify=shared_tls_context())
    return {"api_key": api_key, "base_url": base_url or None, "timeout": timeout,
            "max_retries": max_retries, "middleware": [_BoundedRetryWait(max_retry_wait)],
            "http_client": http_client}


def abort_connection(response: Any) -> None:
    """Breaks off a streaming response from any thread, waking a reader blocked on the socket.

    Closing a socket does not wake a thread blocked in `recv` on it; shutting it down does, and
    sends the FIN that tells the server we left. Falls back to closing the response.
    """
    network_stream = response.extensions.get("network_stream")
    sock = network_stream.get_extra_info("socket") if network_stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
            return
        except OSError:
            return
    try:
        response.close()
    except Exception:
        log.debug("closing the aborted response failed", exc_info=True)
