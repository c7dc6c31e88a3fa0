"""`OpenAIBackend`: `request`, `stream` and `tool_request` on one Chat Completions endpoint.

`ApiClient` keeps one per (base URL, key) and hands each call to it when the provider is
`openai_compatible`. SDK responses are dumped to plain JSON data at once; nothing of the SDK
leaves this module. `max_tokens` is sent as `max_completion_tokens` to api.openai.com (whose
current models refuse the old name) and as `max_tokens` everywhere else (what local servers read).
"""
from __future__ import annotations

import threading
from typing import Iterator
from urllib.parse import urlsplit

from .openai import _get, build_kwargs, stop_reason, usage_dict
from .openai_errors import NotAnApi, from_exception
from .openai_sdk import new_client, request_options
from .openai_stream import run_stream
from .openai_tools import OpenAIToolLoop
from .types import ApiResponse, RequestConfig, StreamEvent

MAX_BODY_CHARS = 2_000_000


class OpenAIBackend:
    """The SDK client for one endpoint and key, and the three calls on top of it."""

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

    def kwargs(self, config: RequestConfig, model: str) -> dict:
        """The request body for `config` (no `stream`)."""
        return build_kwargs(config, model, completion_tokens_field=self.tokens_field)

    def request(self, config: RequestConfig, model: str) -> ApiResponse:
        """One non-streaming request."""
        try:
            response = self.create(**self.kwargs(config, model))
        except Exception as exc:
            return _failed(from_exception(exc, self.api_key))
        choice = (response.get("choices") or [{}])[0] or {}
        text = _get(choice.get("message"), "content")
        return ApiResponse(success=True, content=(text or "").strip() if isinstance(text, str) else "",
                           usage=usage_dict(response.get("usage")), raw_response=response,
                           stop_reason=stop_reason(choice.get("finish_reason")))

    def stream(self, config: RequestConfig, model: str, cancel: threading.Event | None
               ) -> Iterator[StreamEvent]:
        """Streams `config` (see `run_stream`)."""
        kwargs = {**build_kwargs(config, model, completion_tokens_field=self.tokens_field),
                  **self.options}
        yield from run_stream(self.sdk, kwargs, cancel, bool(config.tools), self.api_key,
                              self.timeout)

    def tool_request(self, config: RequestConfig, model: str, executor, create=None) -> ApiResponse:
        """The tool loop (see `OpenAIToolLoop`); `create` re-reads the key per round."""
        return OpenAIToolLoop(create or self.create, config, model, executor, self.api_key,
                              self.tokens_field).run()

    def create(self, **kwargs) -> dict:
        """One `chat.completions.create` as plain JSON data; NotAnApi for anything else."""
        raw = self.sdk.chat.completions.with_raw_response.create(**kwargs, **self.options)
        kind = raw.headers.get("content-type", "")
        text = raw.text
        if len(text) > MAX_BODY_CHARS:
            raise NotAnApi("response_too_large")
        if "json" not in kind:
            raise NotAnApi("not_an_api")
        response = raw.parse()
        dump = getattr(response, "model_dump", None)
        data = dump(mode="json") if callable(dump) else response
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise NotAnApi("not_an_api")
        return data

    def models(self) -> list[str]:
        """The ids `GET /models` lists (raises on failure)."""
        page = self.sdk.models.list(**self.options)
        return sorted({item.id for item in page.data if isinstance(getattr(item, "id", None), str)})


def _failed(problem) -> ApiResponse:
    return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                       retryable=problem.retryable)
