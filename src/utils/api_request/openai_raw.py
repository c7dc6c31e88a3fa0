"""The Chat Completions stream read straight off the `openai` SDK's raw response, as dicts.

The SDK's own iterator builds a pydantic `ChatCompletionChunk` per chunk, most of the
OpenAI-compatible path's CPU per turn (issue #23: 2–4× the Anthropic path's). Like
`raw_stream.py` for Claude, the request goes through the SDK's documented raw access
(`chat.completions.with_streaming_response.create()`: auth, retries, an error status raised as
the SDK's `APIStatusError` unchanged) and only the body is read here, following the SDK's
`Stream` rule for rule: an event is dispatched at a blank line, `data: [DONE]` ends the stream,
an event without data is skipped, a chunk carrying `error` raises the SDK's `APIError`, and a
data line that is not JSON (or not UTF-8) raises the same decoding error the SDK raises.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from .raw_body import sse_blocks


def open_stream(sdk: Any, kwargs: dict) -> AbstractContextManager[Any]:
    """The raw streaming response's context manager (the request is sent on entering it)."""
    return sdk.chat.completions.with_streaming_response.create(stream=True, **kwargs)


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
