"""Callbacks that follow some news: a finished cortex job (CortexWorker), a stored session
title (TitleGenerator); the chat socket listens to both.

`subscribe` returns the function that unsubscribes again. `notify` calls every listener outside
the lock (one may unsubscribe while it is called) and logs a listener's failure instead of
handing it to the thread that had the news.
"""
import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Listeners(Generic[T]):
    """The listeners of one kind of news; `failure` is what the log says when one raises."""

    def __init__(self, failure: str):
        self._failure = failure
        self._lock = threading.Lock()
        self._listeners: list[Callable[[T], None]] = []

    def subscribe(self, listener: Callable[[T], None]) -> Callable[[], None]:
        """Calls `listener(news)` for each piece of news from now on; returns the unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def notify(self, news: T) -> None:
        """Calls every listener with `news`; a failing one is logged, the others still run."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(news)
            except Exception:
                log.exception(self._failure)
