"""A reply's events for one follower in the generating process, fed by the reply's own thread.

The reply's thread hands each chunk and its end to the feed (`Generation.attach`): a list append
and one event set, no condition to notify and no thread woken per piece. The follower (an SSE
response's generator, a resumed socket's sender) wakes on that event, takes everything pending at
once and yields it as one chunk, so a reader that falls behind (a slow client, a busy worker)
gets fewer, larger writes and never a piece twice or out of order. Followers of a reply generated
by another process tail its row instead (`GenerationHub.tail`).
"""
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from . import chat_events as events
from .chat_events import ChatEvent

Sink = Callable[[ChatEvent], object]


class Source(Protocol):
    """What a feed needs of a `Generation`."""

    def attach(self, sink: Sink, offset: int) -> list[ChatEvent]: ...

    def detach(self, sink: Sink) -> None: ...


class ReplyFeed:
    """The chunks beyond `offset` (pending ones coalesced), then the final event."""

    def __init__(self, source: Source, offset: int):
        self._source = source
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._text: list[str] = []
        self._final: ChatEvent | None = None
        with self._lock:  # a chunk the reply sends meanwhile waits here, behind the backlog
            for event in source.attach(self._put, offset):
                self._take(event)

    def events(self, stop: Callable[[], bool], wait: float) -> Iterator[ChatEvent]:
        """Yields what arrives until the final event; checks `stop()` at least every `wait`
        seconds (a detached follower, a closing process) and ends early when it is true.
        Closing the iterator detaches the feed from the reply."""
        try:
            while True:
                self._ready.wait(wait)
                with self._lock:
                    self._ready.clear()
                    text, final, self._text = "".join(self._text), self._final, []
                if text:
                    yield events.chunk(text)
                if final is not None:
                    yield final
                    return
                if stop():
                    return
        finally:
            self._source.detach(self._put)

    def _put(self, event: ChatEvent) -> None:
        """Called by the reply's thread."""
        with self._lock:
            self._take(event)

    def _take(self, event: ChatEvent) -> None:
        if event.type == "chunk":
            self._text.append(event.data["text"])
        else:
            self._final = event
        self._ready.set()
