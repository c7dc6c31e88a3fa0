"""`OpenAIBackend`: the `openai` SDK client for one Chat Completions endpoint and key.

`ApiClient` keeps one per (base URL, key) and wraps it in an `OpenAIAdapter` for the engine.
Responses are read as plain JSON data; nothing of the SDK leaves this module.
`max_tokens` is sent as `max_completion_tokens` to api.openai.com (whose current models refuse
the old name) and as `max_tokens` everywhere else (what local servers read).
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from . import openai_raw
from .openai import build_kwargs
from .openai_adapter import OpenAIAdapter
from .openai_errors import NotAnApi
from .openai_sdk import new_client, request_options
from .raw_body import RawResponse
from .stream_run import run_stream
from .types import RequestConfig, StreamEvent

MAX_BODY_CHARS = 2_000_000


class OpenAIBackend:
    """The SDK client for one endpoint and key: one round, one stream, the model list."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float, max_retries: int,
                 event_hooks: dict | None = None):
        self.base_url, self.api_key, self.timeout = base_url, api_key, timeout
        self.sdk = new_client(api_key, base_url, timeout, max_retries, event_hooks=event_hooks)
        self.options = request_options(api_key)
        host = urlsplit(base_url).hostname or ""
        self.tokens_field = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"

    def close(self) -> None:
        """Releases the HTTP connections."""
        self.sdk.close()

    def adapter(self) -> OpenAIAdapter:
        """This endpoint as the engine's adapter."""
        return OpenAIAdapter(lambda: self, self.api_key, self.timeout, self.tokens_field)

    def kwargs(self, config: RequestConfig, model: str) -> dict:
        """The request body for `config` (no `stream`)."""
        return build_kwargs(config, model, completion_tokens_field=self.tokens_field)

    def stream(self, config: RequestConfig, model: str, cancel: threading.Event | None
               ) -> Iterator[StreamEvent]:
        """Streams `config` through the engine."""
        return run_stream(self.adapter(), config, model, cancel)

    def create(self, **kwargs: Any) -> dict:
        """One chat completion (sent as `create` sends it, `openai_raw.complete`) as plain
        JSON data; NotAnApi for anything else."""
        raw = openai_raw.complete(self.sdk, kwargs, self.options.get("extra_headers"))
        kind = raw.headers.get("content-type", "")
        text = raw.text
        if len(text) > MAX_BODY_CHARS:
            raise NotAnApi("response_too_large")
        if "json" not in kind:
            raise NotAnApi("not_an_api")
        data = raw.json()
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise NotAnApi("not_an_api")
        return data

    def open_stream(self, body: dict) -> RawResponse:
        """One streaming `chat.completions.create` (usage requested), read raw
        (`openai_raw.py`)."""
        opened = openai_raw.open_stream(self.sdk, {"stream_options": {"include_usage": True},
                                                   **body}, self.options.get("extra_headers"))
        return RawResponse(opened, _chunks)

    def models(self) -> list[str]:
        """The ids `GET /models` lists (raises on failure)."""
        page = self.sdk.models.list(**self.options)
        return sorted({item.id for item in page.data if isinstance(getattr(item, "id", None), str)})


def _chunks(http_response: Any) -> Iterator[dict]:
    """The stream's chunks; an HTML page instead of a stream is `not_an_api`."""
    if "html" in http_response.headers.get("content-type", ""):
        raise NotAnApi("not_an_api")
    return openai_raw.chunks(http_response)
