"""Listeners: the news fan-out the cortex worker and the title generator share."""
import logging

from src.utils.listeners import Listeners


def test_each_listener_hears_the_news_until_it_unsubscribes():
    listeners: Listeners[str] = Listeners("A test listener failed")
    heard_a, heard_b = [], []
    unsubscribe_a = listeners.subscribe(heard_a.append)
    listeners.subscribe(heard_b.append)
    listeners.notify("first")
    unsubscribe_a()
    unsubscribe_a()  # twice is harmless
    listeners.notify("second")
    assert heard_a == ["first"]
    assert heard_b == ["first", "second"]


def test_a_failing_listener_is_logged_and_the_others_still_hear(caplog):
    listeners: Listeners[int] = Listeners("A test listener failed")
    heard = []

    def broken(news: int) -> None:
        raise RuntimeError("boom")

    listeners.subscribe(broken)
    listeners.subscribe(heard.append)
    with caplog.at_level(logging.ERROR):
        listeners.notify(7)
    assert heard == [7]
    assert "A test listener failed" in caplog.text


def test_a_listener_may_unsubscribe_while_it_is_called():
    listeners: Listeners[str] = Listeners("A test listener failed")
    heard = []

    def once(news: str) -> None:
        heard.append(news)
        unsubscribe()

    unsubscribe = listeners.subscribe(once)
    listeners.notify("a")
    listeners.notify("b")
    assert heard == ["a"]
