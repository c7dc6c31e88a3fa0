"""Builds the `openai` SDK client for one endpoint: bounded retry waits, no key when none is set.

Local servers (Ollama, llama.cpp, vLLM, LM Studio) usually need no key. The SDK insists on
one, so without a key we give it a placeholder and omit the Authorization header on every
request (`request_options`), so nothing
that looks like a credential is sent. Like the Anthropic path, a `retry-after` longer than
`MAX_RETRY_WAIT` is not waited for: the error surfaces at once (via the SDK's own
`x-should-retry` header, set by a response hook of its HTTP client).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx2

from .sdk import MAX_RETRY_WAIT, retry_after_seconds, shared_tls_context

log = logging.getLogger(__name__)

NO_KEY = "no-key-configured"


def _bounded_wait(max_wait: float) -> Callable[[httpx2.Response], None]:
    def hook(response: httpx2.Response) -> None:
        if response.is_success:
            return
        wait = retry_after_seconds(response.headers)
        if wait is not None and wait > max_wait:
            log.info("not retrying: the endpoint asked to wait %.0f s", wait)
            response.headers["x-should-retry"] = "false"
    return hook


def new_client(api_key: str | None, base_url: str, timeout: Any, max_retries: int,
               max_retry_wait: float = MAX_RETRY_WAIT, event_hooks: dict | None = None) -> Any:
    """An `openai.OpenAI` for `base_url` (key passed explicitly, so no environment key is read)
    that follows no redirect: the key goes to `base_url` only, never to wherever that answers
    a 3xx to (DESIGN §15 "Keys"); `event_hooks` are added to the retry-wait bound.

    The SDK is imported here, on first use, not with the app: it adds about 13 MiB to every
    worker that never talks to an OpenAI-compatible endpoint (a worker whose configured
    provider it is loads it at boot: `sdk.warm_up`). The TLS context is the process's shared
    one (`sdk.shared_tls_context`): building one took 26 ms, on every connection test too."""
    import openai as openai_sdk
    hooks = {"request": [], **(event_hooks or {})}
    hooks["response"] = [*hooks.get("response", []), _bounded_wait(max_retry_wait)]
    http_client = openai_sdk.DefaultHttpxClient(follow_redirects=False, event_hooks=hooks,
                                                verify=shared_tls_context())
    return openai_sdk.OpenAI(api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout,
                             max_retries=max_retries, http_client=http_client)


def request_options(api_key: str | None) -> dict[str, Any]:
    """Per-request options: without a key, the Authorization header is left out."""
    if api_key:
        return {}
    import openai as openai_sdk  # loaded by new_client already
    return {"extra_headers": {"Authorization": openai_sdk.Omit()}}
