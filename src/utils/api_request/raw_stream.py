"""The chat stream's events read straight off the SDK's raw response, as plain dicts.

The SDK's own iterator decodes each SSE event through several layers and builds a pydantic model
per event, most of a reply's CPU cost on our side. `messages.with_streaming_response.create()` is
the SDK's documented raw access: the request itself (auth, retries, the retry-wait middleware, an
error status raised as the SDK's `APIStatusError`) is unchanged; only the body is read here. The
decoding follows the SDK's `Stream` rule for rule: an event is dispatched at a blank line (so a
recorded stream whose last event lacks one ends without it, as with the SDK), `ping` and events
without a name or data are skipped, and an `error` event raises `APIStatusError` (status 200)
with its body, as the SDK does.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import anthropic

from .raw_body import sse_blocks


def open_stream(sdk: Any, kwargs: dict) -> AbstractContextManager[Any]:
    """The raw streaming response's context manager (the request is sent on entering it)."""
    return sdk.messages.with_streaming_response.create(stream=True, **kwargs)


def events(http_response: Any) -> Iterator[dict]:
    """The stream's events as dicts (`{"type": ..., ...}`), in order."""
    for block in sse_blocks(http_response):
        name: str | None = None
        data: list[str] = []
        for line in block:
            field, _, value = line.decode("utf-8", "replace").partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        event = _dispatch(name, data, http_response)
        if event is not None:
            yield event


def _dispatch(name: str | None, data: list[str], http_response: Any) -> dict | None:
    if name is None or name == "ping":
        return None
    text = "\n".join(data)
    if name == "error":
        try:
            body: Any = json.loads(text)
            message = f"{body}"
        except ValueError:
            body, message = text, text or f"Error code: {http_response.status_code}"
        raise anthropic.APIStatusError(message, response=http_response, body=body)
    if not text:
        return None
    event = json.loads(text)
    return event if isinstance(event, dict) else None
