"""What both raw stream readers share (`raw_stream.py` for Claude, `openai_raw.py` for
OpenAI-compatible endpoints): the response the SDK opened with `with_streaming_response`, and
its body cut into SSE events. Each reader decodes the events by its own SDK's rules."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .sdk import abort_connection


class RawResponse:
    """A raw streaming response: entering `opened` sends the request; `read` turns the body
    into the stream's events."""

    def __init__(self, opened: Any, read: Callable[[Any], Iterator[Any]]):
        self._opened, self._read = opened, read
        self._response = opened.__enter__().http_response

    def events(self) -> Iterator[Any]:
        return self._read(self._response)

    def sent(self) -> bytes:
        """The request body exactly as the SDK sent it."""
        return bytes(self._response.request.content)

    def abort(self) -> None:
        abort_connection(self._response)

    def close(self) -> None:
        self._opened.__exit__(None, None, None)


def sse_blocks(http_response: Any) -> Iterator[list[bytes]]:
    """The body's events, each as its non-empty lines (CR stripped), dispatched at a blank line
    as the SSE rules say (an event without one at the end of the body is dropped); an empty
    list for a blank line that ends no event."""
    block: list[bytes] = []
    pending = b""
    for piece in http_response.iter_bytes():
        pending += piece
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if line:
                block.append(line)
            else:
                yield block
                block = []
