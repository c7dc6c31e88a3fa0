"""Cancelling a stream closes the upstream connection at once and ends with the partial text."""
import queue
import threading

from src.utils.api_request import CancelSignal, RequestConfig
from tests.api_request.conftest import TOOLS, blocked_in_socket_read, user, wait_until
from tests.fakes.claude import replies

CONFIG = RequestConfig(system_prompt="s", messages=user())
DEADLINE = 10.0  # only bounds a failure ("at once" is the gate: the reply never ends by itself)


def test_cancel_from_another_thread_while_waiting_for_the_next_delta(api, claude):
    gate, cancel = threading.Event(), threading.Event()
    claude.enqueue(replies.gated(replies.text("First words, then much more.",
                                              chunks=["First words,", " then much more."]), gate))
    received = queue.Queue()

    def consume():
        for event in api.stream(CONFIG, cancel=cancel):
            received.put(event)

    consumer = threading.Thread(target=consume)
    consumer.start()
    try:
        assert received.get(timeout=DEADLINE).data == "First words,"
        wait_until(lambda: blocked_in_socket_read(consumer), what="the reader to block")
        cancel.set()
        done = received.get(timeout=DEADLINE)
        assert claude.wait_for_disconnect(timeout=DEADLINE, index=0)
    finally:
        gate.set()
        consumer.join(5)

    assert done.event_type == "done"
    assert done.data["stop_reason"] == "cancelled" and done.data["text"] == "First words,"
    assert received.empty() and not consumer.is_alive()


def test_cancel_between_chunks_in_the_consuming_thread(api, claude):
    gate, cancel = threading.Event(), threading.Event()
    claude.enqueue(replies.gated(replies.text("One two three four", chunks=["One ", "two ", "three four"]),
                                 gate, after_events=4))
    events = []
    try:
        for event in api.stream(CONFIG, cancel=cancel):
            events.append(event)
            cancel.set()
        assert claude.wait_for_disconnect(timeout=DEADLINE, index=0)
    finally:
        gate.set()

    assert [e.event_type for e in events] == ["chunk", "done"]
    assert events[-1].data["text"] == "One " and events[-1].data["stop_reason"] == "cancelled"


def test_cancel_before_the_stream_starts_sends_nothing(api, claude):
    cancel = threading.Event()
    cancel.set()

    events = list(api.stream(CONFIG, cancel=cancel))

    assert [(e.event_type, e.data["stop_reason"]) for e in events] == [("done", "cancelled")]
    assert claude.requests == []


def test_abandoning_the_stream_closes_the_upstream_connection(api, claude):
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("Never finished here."), gate))
    stream = api.stream(CONFIG)
    try:
        assert next(stream).event_type == "chunk"
        stream.close()
        assert claude.wait_for_disconnect(timeout=DEADLINE, index=0)
    finally:
        gate.set()


def test_a_cancel_after_the_end_does_not_change_the_result(api, claude):
    cancel = threading.Event()
    claude.enqueue(replies.text("Complete."))

    events = []
    for event in api.stream(CONFIG, cancel=cancel):
        events.append(event)
        if event.event_type == "done":
            cancel.set()

    assert events[-1].data["stop_reason"] == "end_turn"


def test_a_tool_call_cut_off_by_cancel_is_not_offered_to_run(api, claude):
    gate, cancel = threading.Event(), threading.Event()
    reply = replies.tool_use([("write_file", {"filename": "memory.md", "content": "x"})])
    claude.enqueue(replies.gated(reply, gate, after_events=5))
    events = []
    try:
        for event in api.stream(RequestConfig(system_prompt="s", messages=user(), tools=TOOLS),
                                cancel=cancel):
            events.append(event)
            if event.event_type == "segment" and event.data.event_type == "content":
                cancel.set()
    finally:
        gate.set()

    done = events[-1]
    assert done.data["stop_reason"] == "cancelled" and done.data["tool_calls"] == []
    assert done.data["invalid_tool_calls"][0].name == "write_file"
    assert events[-2].event_type == "segment" and events[-2].data.event_type == "end"


def _watcher_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "stream-cancel"}


def test_cancel_signal_closes_upstream_from_the_cancelling_thread(api, claude):
    """A CancelSignal aborts the connection inside `set()`, with no watcher thread per stream."""
    gate, cancel = threading.Event(), CancelSignal()
    claude.enqueue(replies.gated(replies.text("Hello there, friend!",
                                              chunks=["Hello", " there, friend!"]), gate))
    watchers_before = _watcher_threads()  # an earlier test's watcher may still be ending
    try:
        events = api.stream(CONFIG, cancel=cancel)
        first = next(events)
        assert (first.event_type, first.data) == ("chunk", "Hello")
        assert _watcher_threads() <= watchers_before
        cancel.set()
        assert claude.wait_for_disconnect(timeout=DEADLINE)
        rest = list(events)
        assert [e.event_type for e in rest] == ["done"]
        assert (rest[0].data["stop_reason"], rest[0].data["text"]) == ("cancelled", "Hello")
    finally:
        gate.set()
