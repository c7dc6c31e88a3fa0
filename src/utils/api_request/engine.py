"""The engine's three entry points over any `ProviderAdapter`: one request, a stream, a tool loop.

`ApiClient` picks the adapter for the configured provider once per call and hands it here; a
test (or a third provider) can call these directly with its own adapter.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator

from .adapter import ProviderAdapter
from .errors import ApiFailure
from .handler import ToolHandler
from .stream_run import run_stream
from .tool_loop import ToolLoop
from .types import ApiResponse, RequestConfig, StreamEvent, ToolExecutor


def request(adapter: ProviderAdapter, config: RequestConfig, model: str) -> ApiResponse:
    """One non-streaming request; the text of the reply (without the prefill) in `content`."""
    try:
        answer = adapter.complete(adapter.body(config, model, config.tools), config.max_tokens)
    except Exception as exc:
        return failed(adapter.failure(exc))
    return ApiResponse(success=True, content=answer.text, usage=answer.usage,
                       raw_response=answer.raw, stop_reason=answer.stop_reason)


def stream(adapter: ProviderAdapter, config: RequestConfig, model: str,
           cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
    """Yields `chunk`s (and tool `segment`s), then exactly one `done` or `error`."""
    return run_stream(adapter, config, model, cancel)


def tool_request(adapter: ProviderAdapter, config: RequestConfig, model: str,
                 executor: ToolExecutor | ToolHandler) -> ApiResponse:
    """The tool loop (see `ToolLoop`)."""
    return ToolLoop(adapter, config, model, executor).run()


def failed(problem: ApiFailure) -> ApiResponse:
    """A failed ApiResponse for `problem`."""
    return ApiResponse(success=False, error=problem.code, error_message=problem.message,
                       retryable=problem.retryable)
