"""Chat Completions requests sent with the `openai` client's `post`, the stream read as dicts.

The SDK's own iterator builds a pydantic `ChatCompletionChunk` per chunk. Like `raw_stream.py`
for Claude, only the body is read here, following the SDK's `Stream` rule for rule: an event is
dispatched at a blank line, `data: [DONE]` ends the stream, an event without data is skipped, a
chunk carrying `error` raises the SDK's `APIError`, and a data line that is not JSON (or not
UTF-8) raises the same decoding error the SDK raises.

Requests (streaming, and the one-shot ones of `OpenAIBackend.create`) go through the client's
documented `post` (`cast_to=httpx2.Response`), not `chat.completions.create`: `create` runs its
parameters through the SDK's `maybe_transform`, which walks every message against each TypedDict
of the message union (about 150 µs per message of history: 3.2 ms for 21 messages, 6.3 ms for
41; most of the path's extra CPU, docs/performance.md; the `anthropic` SDK has no such walk). Chat
Completions parameters have no aliases or formats, so the walk returns the body unchanged; the
body is put in `create`'s field order, so the bytes sent are the same. Auth, retries, the
response hooks and an error status raised as `APIStatusError` are the client's and unchanged
(only the SDK's internal `x-stainless-raw-response` marker of its raw access is not sent).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Self

import httpx2

from .raw_body import sse_blocks

# `chat.completions.create`'s order of the fields it sends (its body's JSON key order).
FIELD_ORDER = ("model", "stream", "service_tier", "messages", "audio", "frequency_penalty",
               "function_call", "functions", "logit_bias", "logprobs", "max_completion_tokens",
               "max_tokens", "metadata", "modalities", "moderation", "n", "parallel_tool_calls",
               "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
               "prompt_cache_retention", "reasoning_effort", "response_format",
               "safety_identifier", "seed", "stop", "store", "stream_options", "temperature",
               "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
               "web_search_options")
_RANK = {name: rank for rank, name in enumerate(FIELD_ORDER)}


def open_stream(sdk: Any, body: dict, headers: dict | None = None
                ) -> AbstractContextManager[Any]:
    """The raw streaming response's context manager (the request is sent on entering it);
    `headers` are the request's extra headers."""
    return _Opened(sdk, ordered({**body, "stream": True}), headers)


def complete(sdk: Any, body: dict, headers: dict | None = None) -> httpx2.Response:
    """One request without streaming: the response, read (an error status raises as `create`
    raises it)."""
    return _post(sdk, ordered(body), headers, stream=False)


def ordered(body: dict) -> dict:
    """`body` in the order `chat.completions.create` sends its fields (fields it does not know
    keep their order, after them)."""
    return dict(sorted(body.items(), key=lambda item: _RANK.get(item[0], len(_RANK))))


def _post(sdk: Any, body: dict, headers: dict | None, stream: bool) -> httpx2.Response:
    options: dict[str, Any] = {"security": {"bearer_auth": True}}  # as `create` asks
    if headers:
        options["headers"] = headers
    return sdk.post("/chat/completions", cast_to=httpx2.Response, body=body, options=options,
                    stream=stream)


class _Opened:
    """Sends the request on entering (the client's `post`, the body not read yet) and closes
    the response on leaving, like the SDK's `with_streaming_response`."""

    def __init__(self, sdk: Any, body: dict, headers: dict | None):
        self._sdk, self._body, self._headers = sdk, body, headers
        self.http_response: Any = None

    def __enter__(self) -> Self:
        self.http_response = _post(self._sdk, self._body, self._headers, stream=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.http_response is not None:
            self.http_response.close()


def chunks(http_response: Any) -> Iterator[dict]:
    """The stream's chunks as dicts, in order, until `[DONE]` or the end of the body."""
    for block in sse_blocks(http_response):
        text = "\n".join(line[5:].decode("utf-8").removeprefix(" ")
                         for line in block if line.startswith(b"data:"))
        if not text:
            continue
        if text.startswith("[DONE]"):
            return
        yield _chunk(text, http_response)


def _chunk(text: str, http_response: Any) -> Any:
    chunk = json.loads(text)
    if isinstance(chunk, dict) and chunk.get("error"):
        import openai  # here, not at the top: an app on Anthropic never loads the SDK (13 MiB)
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise openai.APIError(message, http_response.request, body=error)
    return chunk
