"""The Anthropic Messages API as a `ProviderAdapter` of the one engine.

Bodies come from `request_builder.py`, shapes from the converter `anthropic.py`. Streams are read
raw (`raw_stream.py`: the SDK's `with_streaming_response`, events decoded as dicts) rather than
through the SDK's `MessageStream`, which rebuilds a snapshot on every event. `message_stop` is
the end marker; recorded API streams lack the blank line after it, so a stream whose body ends
cleanly after `message_delta` gave the stop reason also counts (the runner decides that).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import raw_stream
from .adapter import Delta, LoopView, Round
from .anthropic import (
    assistant_message,
    chunk_from_event,
    message_dict,
    text_of,
    tool_calls,
    tool_results_message,
    usage_dict,
)
from .client_shelf import ClientShelf
from .errors import ApiFailure, failure, from_exception
from .raw_body import RawResponse
from .request_builder import build_kwargs
from .sdk import abort_connection
from .types import ApiResponse, RequestConfig, ToolDefinition, ToolResult

_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@contextmanager
def _lent_stream(shelf: ClientShelf, body: dict) -> Iterator[Any]:
    """The raw streaming response on a lent client, given back once the response is closed;
    closing the shelf breaks it off."""
    with shelf.lend() as sdk, raw_stream.open_stream(sdk, body) as opened:
        shelf.abort_on_close(sdk, functools.partial(abort_connection, opened.http_response))
        yield opened


class AnthropicAdapter:
    """Claude through the `anthropic` SDK; `sdk()` is the client to use now (raises KeyRemoved
    when the key went away, so a tool loop's later rounds follow the stored key). With `shelf`,
    each stream runs on a client lent for it alone (`client_shelf.py`)."""

    provider = "anthropic"

    def __init__(self, sdk: Callable[[], Any], secret: str | None, timeout: float,
                 shelf: ClientShelf | None = None):
        self._sdk = sdk
        self._shelf = shelf
        self.secret = secret
        self.timeout = timeout

    def body(self, config: RequestConfig, model: str,
             tools: Sequence[ToolDefinition | dict] | None) -> dict:
        """`messages.create`'s keyword arguments (see `request_builder.build_kwargs`)."""
        return build_kwargs(config, model, tools)

    def complete(self, body: dict, max_tokens: int) -> Round:
        """One `messages.create`."""
        response = self._sdk().messages.create(**{**body, "max_tokens": max_tokens})
        return Round(text=text_of(response.content), calls=tool_calls(response.content),
                     stop_reason=response.stop_reason, usage=usage_dict(response.usage),
                     raw=message_dict(response), content=response.content)

    def open_stream(self, body: dict) -> RawResponse:
        """The raw streaming response (the request is sent here)."""
        opened = raw_stream.open_stream(self._sdk(), body) if self._shelf is None \
            else _lent_stream(self._shelf, body)
        return RawResponse(opened, raw_stream.events)

    def translator(self) -> _Translation:
        """A fresh event translator."""
        return _Translation()

    def append_round(self, body: dict, answer: Round, results: list[ToolResult]) -> None:
        """The assistant turn (tool_use blocks kept) and one `tool_result` per call, in order."""
        body["messages"] += [assistant_message(answer.content), tool_results_message(results)]

    def failure(self, exc: BaseException) -> ApiFailure:
        """See `errors.from_exception`."""
        return from_exception(exc, self.secret)

    def problem(self, code: str, detail: str | None = None) -> ApiFailure:
        """See `errors.failure`."""
        return failure(code, detail, self.secret)

    def fallback(self, loop: LoopView, problem: ApiFailure) -> ApiResponse | None:
        """Claude always has tools: no fallback."""
        return None


class _Translation:
    """Messages API stream events as Deltas; usage is merged as the API reports it."""

    def __init__(self) -> None:
        self.usage: dict[str, int] = {}

    def feed(self, event: dict) -> list[Delta]:
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                return [Delta(text=delta.get("text") or "")]
        elif kind == "message_start":
            self.usage = usage_dict((event.get("message") or {}).get("usage"))
            return [Delta(usage=self.usage)]
        elif kind == "message_delta":
            self._update_usage(event.get("usage") or {})
            return [Delta(stop_reason=(event.get("delta") or {}).get("stop_reason"),
                          usage=self.usage)]
        elif kind == "message_stop":
            return [Delta(complete=True)]
        elif kind == "content_block_stop":
            return [Delta(close_tool=event.get("index"))]
        chunk = chunk_from_event(event)
        if chunk is None:
            return []
        texts = [Delta(text=chunk.content)] if chunk.content else []
        return texts + [Delta(tool=piece) for piece in chunk.tool_calls or ()]

    def _update_usage(self, usage: dict) -> None:
        """`message_delta` has the final output count; other counters only when it reports them."""
        if isinstance(usage.get("output_tokens"), int):
            self.usage["output_tokens"] = usage["output_tokens"]
        for key in _INPUT_KEYS:
            if usage.get(key):
                self.usage[key] = usage[key]
