"""Replies that shape how an answer arrives: cut by an error or a drop, gated, delayed, replayed."""
from pathlib import Path

from tests.fakes import sse
from tests.fakes.messages import ERROR_STATUS, Reply, Streamable, stream_events, text

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic_sse"
_DEFAULT_BASE = "This answer gets cut off before it ends, which the client has to notice."


def _base(reply) -> Streamable:
    if reply is None:
        return text(_DEFAULT_BASE)
    if not isinstance(reply, Streamable):
        raise TypeError("fake: the base must be a message or fixture reply")
    return reply


def _first_delta(events: list[bytes]) -> int:
    names = [sse.parse(raw)[0] for raw in events]
    return names.index("content_block_delta") if "content_block_delta" in names else 2


class StreamError(Reply):
    """A stream that breaks off with an `error` event (HTTP status 200 already sent)."""

    def __init__(self, error_type, message, after_events, base):
        self.error_type, self.message = error_type, message
        self.after_events, self.base = after_events, _base(base)

    def serve(self, ex) -> None:
        if not ex.stream:
            ex.send_error(ERROR_STATUS.get(self.error_type, 500), self.error_type, self.message)
            return
        events = self.base.events(ex)[:self.after_events]
        if stream_events(ex, events, self.base.event_delay, finish=False):
            ex.send_error(200, self.error_type, self.message)


def stream_error(error_type="overloaded_error", message="Overloaded", after_events=3, base=None):
    """`after_events` events of `base`, then `event: error`; non-stream: the matching HTTP error."""
    return StreamError(error_type, message, after_events, base)


class Drop(Reply):
    """A connection closed mid-answer, without finishing the chunked body."""

    def __init__(self, after_events, base):
        self.after_events, self.base = after_events, _base(base)

    def serve(self, ex) -> None:
        if not ex.stream:
            ex.drop_json(self.base.message(ex))
            return
        events = self.base.events(ex)[:self.after_events]
        if stream_events(ex, events, self.base.event_delay, finish=False):
            ex.drop()


def drop(after_events=3, base=None):
    """Stream `after_events` events, then close the socket; non-stream: half a JSON body."""
    return Drop(after_events, base)


class Unfinished(Reply):
    """A stream that ends cleanly but early: no message_delta (stop_reason), no message_stop."""

    def __init__(self, after_events, base):
        self.after_events, self.base = after_events, _base(base)

    def serve(self, ex) -> None:
        events = self.base.events(ex)
        names = [sse.parse(raw)[0] for raw in events]
        cut = self.after_events
        if cut is None:
            cut = names.index("message_delta") if "message_delta" in names else len(events) - 1
        if ex.stream:
            stream_events(ex, events[:cut], self.base.event_delay)
        else:
            ex.send_json(200, sse.assemble([sse.parse(raw) for raw in events[:cut]
                                            if sse.parse(raw)[1]]))


def unfinished(after_events=None, base=None):
    """A stream that stops before message_delta (or after `after_events`), chunked end intact."""
    return Unfinished(after_events, base)


class Fixture(Streamable):
    """A recorded real stream, replayed byte for byte (one chunk per event)."""

    def __init__(self, name, event_delay=0.0, complete=False):
        path = FIXTURES / name
        if "/" in name or not path.is_file():
            known = sorted(p.name for p in FIXTURES.glob("*.sse"))
            raise ValueError(f"fake: no fixture {name!r}; known: {known}")
        self.raw, self.event_delay = path.read_bytes(), event_delay
        if complete:
            self.raw = self.raw.rstrip(b"\n") + b"\n\n"

    def events(self, ex) -> list[bytes]:
        return sse.split_raw(self.raw)


def fixture(name, event_delay=0.0, complete=False):
    """Replay tests/fakes/fixtures/anthropic_sse/<name>; non-stream: the events assembled.

    The recorded files end without the blank line after `message_stop`, so the SDK never yields
    that event; `complete=True` adds the missing newlines (and nothing else).
    """
    return Fixture(name, event_delay, complete)


class Scripted(Reply):
    """A reply chosen per request by `fn(request_body)`."""

    def __init__(self, fn):
        self.fn = fn

    def serve(self, ex) -> None:
        reply = self.fn(ex.body)
        if isinstance(reply, str):
            reply = text(reply)
        if not isinstance(reply, Reply):
            raise TypeError(f"fake: scripted function returned {reply!r}, not a reply")
        reply.serve(ex)


def scripted(fn):
    """A scripted model: fn(request_body) returns the reply (or a str, meaning text(str))."""
    return Scripted(fn)


class Gated(Reply):
    """Streams up to the first delta, then waits for `gate` (or the client leaving)."""

    def __init__(self, reply, gate, after_events):
        self.reply, self.gate, self.after_events = reply, gate, after_events

    def serve(self, ex) -> None:
        if not (ex.stream and isinstance(self.reply, Streamable)):
            if ex.wait(self.gate) == "set":
                self.reply.serve(ex)
            return
        events = self.reply.events(ex)
        cut = self.after_events if self.after_events is not None else _first_delta(events) + 1
        delay = self.reply.event_delay
        if stream_events(ex, events[:cut], delay, finish=False) and ex.wait(self.gate) == "set":
            stream_events(ex, events[cut:], delay)


def gated(reply, gate, after_events=None):
    """Stream `reply` up to its first content_block_delta, wait for the Event `gate`, go on."""
    return Gated(reply, gate, after_events)


class Delayed(Reply):
    """A reply held back (before the headers, or after them) for `seconds`."""

    def __init__(self, reply, seconds, after_headers):
        self.reply, self.seconds, self.after_headers = reply, seconds, after_headers

    def serve(self, ex) -> None:
        if self.after_headers and ex.stream:
            ex.start_stream()
        if ex.wait(None, self.seconds) == "timeout":
            self.reply.serve(ex)


def delayed(reply, seconds, after_headers=False):
    """Serve `reply` after `seconds` (headers first if `after_headers` and streaming)."""
    return Delayed(reply, seconds, after_headers)


def hang(after_headers=False, seconds=3600.0):
    """Never answer in time (released when the fake closes or the client leaves)."""
    return Delayed(text("Too late."), seconds, after_headers)
