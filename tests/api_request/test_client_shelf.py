"""Streams run on SDK clients lent one per stream (`client_shelf.py`, issue #23): each stream in
flight has its own connection, a finished stream's client (and its connection) serves the next,
and a new key or URL never reuses a client built for the old one."""
import gc
import queue
import threading
import warnings
import weakref

from src.utils.api_request import ApiClient, RequestConfig
from src.utils.api_request.client_shelf import ClientShelf
from tests.fakes.claude import FakeClaude, replies

from .conftest import KEY, MODEL, user


class _Client:
    """A stand-in for an SDK client in the shelf's own tests: all the shelf calls is `close`."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_client_comes_back_to_the_shelf_and_the_last_returned_is_lent_first():
    shelf = ClientShelf(_Client)
    with shelf.lend() as first, shelf.lend() as second:
        assert first is not second  # two streams at once never share a client
    with shelf.lend() as again:
        assert again is first  # `first` was given back last
    assert not first.closed and not second.closed
    assert shelf.idle() == 2


def test_the_shelf_keeps_at_most_its_bound_and_closes_the_surplus():
    shelf = ClientShelf(_Client, keep=1)
    with shelf.lend() as first, shelf.lend() as second:
        pass
    assert shelf.idle() == 1
    assert second.closed is False and first.closed is True  # second came back first and stays


def test_a_retired_shelf_closes_its_idle_clients_and_each_lent_one_when_it_comes_back():
    shelf = ClientShelf(_Client)
    with shelf.lend() as idle:
        pass
    with shelf.lend() as lent:
        assert lent is idle
        with shelf.lend() as other:
            pass
        shelf.retire()  # a new key: the stream in flight keeps its client
        assert other.closed and not lent.closed
    assert lent.closed
    assert shelf.idle() == 0


def test_a_closed_shelf_closes_the_lent_clients_too():
    shelf = ClientShelf(_Client)
    with shelf.lend() as lent:
        shelf.close()  # the app shuts down: nothing is left open behind it
        assert lent.closed
    assert shelf.idle() == 0


def test_a_shelf_dropped_without_closing_closes_its_clients_at_once():
    """An ApiClient never closed drops its shelf: the clients are closed then, not left to the
    cycle collector (which may finalize a connection's socket first: an unclosed socket)."""
    shelf = ClientShelf(_Client)
    with shelf.lend() as kept:
        pass
    del shelf
    assert kept.closed


def test_a_client_is_given_back_when_its_stream_fails():
    shelf = ClientShelf(_Client)
    try:
        with shelf.lend():
            raise ConnectionError("upstream gone")
    except ConnectionError:
        pass
    assert shelf.idle() == 1


def _credential(request) -> str:
    """The key a request carried (the SDK sends it as `x-api-key` or as a bearer token)."""
    return request.headers.get("x-api-key") or request.headers.get("authorization", "")


def _drain(api: ApiClient, into: list) -> None:
    into.append(list(api.stream(RequestConfig("Be brief.", user(), model=MODEL))))


def test_concurrent_streams_each_have_a_connection_and_later_streams_reuse_them(api, claude):
    gate = threading.Event()
    for _ in range(3):
        claude.enqueue(replies.gated(replies.text("Hello there, friend."), gate))
    results: list = []
    threads = [threading.Thread(target=_drain, args=(api, results)) for _ in range(3)]
    for thread in threads:
        thread.start()
    burst = claude.wait_for_requests(3)
    gate.set()
    for thread in threads:
        thread.join(10)
    assert len({request.peer for request in burst}) == 3  # one connection per stream in flight
    claude.enqueue("Once more.", "And again.")
    _drain(api, results)
    _drain(api, results)
    later = claude.requests[3:]
    assert later[0].peer == later[1].peer  # the client given back last serves the next stream
    assert later[0].peer in {request.peer for request in burst}  # on a connection it kept
    assert all(events[-1].event_type == "done" for events in results)
    claude.wait_for_open_connections(3)  # nothing opened beyond the burst's three


def test_a_new_key_streams_on_new_clients_and_the_old_ones_are_closed(claude):
    api = ApiClient(api_key=KEY, base_url=claude.url, timeout=5.0, max_retries=0,
                    default_model=MODEL)
    try:
        claude.enqueue("Before.", "After.")
        events: list = []
        _drain(api, events)
        claude.wait_for_open_connections(1)
        api.set_api_key("sk-ant-test-another-key-0000")
        _drain(api, events)
        before, after = claude.requests
        assert KEY in _credential(before) and "another" not in _credential(before)
        assert "sk-ant-test-another-key-0000" in _credential(after)
        assert after.peer != before.peer  # the old key's client and connection are not reused
        claude.wait_for_open_connections(1)  # the old key's connection was closed
    finally:
        api.close()
    claude.wait_for_open_connections(0)


def test_closing_the_client_closes_the_streams_connections():
    with FakeClaude() as fake:
        api = ApiClient(api_key=KEY, base_url=fake.url, timeout=5.0, max_retries=0,
                        default_model=MODEL)
        fake.enqueue("One.")
        _drain(api, [])
        fake.wait_for_open_connections(1)
        api.close()
        fake.wait_for_open_connections(0)


def test_a_dropped_client_is_freed_at_once_not_left_to_the_cycle_collector(claude):
    """No reference cycle through the shelf: the cycle collector may finalize a connection's
    socket before the client that would close it (an unclosed-socket warning)."""
    api = ApiClient(api_key=KEY, base_url=claude.url, timeout=5.0, max_retries=0,
                    default_model=MODEL)
    claude.enqueue("One.")
    _drain(api, [])
    gone = weakref.ref(api)
    gc.disable()
    try:
        del api
        assert gone() is None
    finally:
        gc.enable()


def test_a_key_changed_mid_stream_lets_the_stream_finish_then_closes_its_connection(claude):
    """The stream in flight keeps its client and key; the next request carries the new key on
    a new connection, and the old one is closed once its stream is done."""
    api = ApiClient(api_key=KEY, base_url=claude.url, timeout=5.0, max_retries=0,
                    default_model=MODEL)
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("Started before the change."), gate), "After.")
    events: list = []
    try:
        first = threading.Thread(target=_drain, args=(api, events))
        first.start()
        claude.wait_for_requests(1)
        api.set_api_key("sk-ant-test-another-key-0000")
        gate.set()
        first.join(10)
        _drain(api, events)
        before, after = claude.requests
        assert [e[-1].event_type for e in events] == ["done", "done"]
        assert "".join(e.data for e in events[0] if e.event_type == "chunk") == \
            "Started before the change."
        assert KEY in _credential(before) and "another" in _credential(after)
        assert after.peer != before.peer
        claude.wait_for_open_connections(1)  # the old client was closed when it came back
    finally:
        api.close()


def test_closing_the_client_mid_stream_ends_the_stream_with_an_error_not_a_hang(claude):
    """Shutdown closes the lent clients too: a stream in flight, its reader blocked on the
    socket (closing a socket does not wake it), is broken off and ends."""
    api = ApiClient(api_key=KEY, base_url=claude.url, timeout=30.0, max_retries=0,
                    default_model=MODEL)
    gate = threading.Event()
    claude.enqueue(replies.gated(replies.text("Never finished."), gate))
    events: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_feed, args=(api, events))
    reader.start()
    try:
        assert events.get(timeout=10).event_type == "chunk"  # the reader now waits for more
        api.close()
        reader.join(10)
        assert not reader.is_alive()
        assert events.get(timeout=1).event_type in ("error", "done")
        claude.wait_for_open_connections(0)
    finally:
        gate.set()
        reader.join(10)


def _feed(api: ApiClient, into: queue.Queue) -> None:
    for event in api.stream(RequestConfig("Be brief.", user(), model=MODEL)):
        into.put(event)


def test_a_dropped_sdk_client_has_its_connections_closed_before_the_collector_finalizes_them(
        claude):
    """The shared client replaced by a new key (or an app never closed) is left to the cycle
    collector; its HTTP client is closed from a weakref callback, which runs before any
    finalizer, so its sockets are closed, never found unclosed by the collector."""
    api = ApiClient(api_key=KEY, base_url=claude.url, timeout=5.0, max_retries=0,
                    default_model=MODEL)
    try:
        claude.enqueue("One-shot.")
        assert api.request(RequestConfig("Be brief.", user(), model=MODEL)).success
        claude.wait_for_open_connections(1)
        api.set_api_key("sk-ant-test-another-key-0000")  # the old shared client is dropped
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            gc.collect()
        claude.wait_for_open_connections(0)
    finally:
        api.close()
