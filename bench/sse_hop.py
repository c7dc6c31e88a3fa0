"""CPU of an SSE reply's hop from the reply's greenlet to the response's, per turn (issue #23).

    .venv/bin/python bench/sse_hop.py [--turns 400] [--streams 8] [--chunks 10]

In one gevent process, `--streams` turns at a time, each a producer greenlet handing
`--chunks` chunks (0.5 ms apart) to a consumer greenlet: through the app's `ReplyFeed` (what the
SSE response's generator reads, each event encoded by `to_sse` with its id), through a
`gevent.queue.Queue` of encoded records (the lean server's `Lean.sse`), and with no hand-over at
all (the producers' sleeps alone, the baseline to subtract). Prints the thread CPU per turn of
each, twice, interleaved.
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import gevent.queue  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from src.utils.services import chat_events as events  # noqa: E402
from src.utils.services.chat_events import ChatEvent, to_sse  # noqa: E402
from src.utils.services.reply_feed import ReplyFeed  # noqa: E402

TEXT = "word " * 5
PACE = 0.0005


class Source:
    """What a `ReplyFeed` attaches to (a `Generation`'s sinks)."""

    def __init__(self) -> None:
        self.sinks: list[Callable[[ChatEvent], object]] = []

    def attach(self, sink: Callable[[ChatEvent], object], offset: int) -> list[ChatEvent]:
        self.sinks.append(sink)
        return []

    def detach(self, sink: Callable[[ChatEvent], object]) -> None:
        self.sinks.remove(sink)


def feed_turn(chunks: int) -> None:
    """The app's hop: the reply's sinks feed a `ReplyFeed`, the follower encodes each event."""
    source = Source()
    feed = ReplyFeed(source, 0)

    def produce() -> None:
        for _ in range(chunks):
            gevent.sleep(PACE)
            for sink in list(source.sinks):
                sink(events.chunk(TEXT))
        for sink in list(source.sinks):
            sink(events.done(1, TEXT, {}, "end_turn", None))
    producer = gevent.spawn(produce)
    for n, event in enumerate(feed.events(lambda: False, 1.0)):
        to_sse(event, f"2:{n}")
    producer.join()


def queue_turn(chunks: int) -> None:
    """The lean server's hop: encoded records through a gevent queue."""
    queue: gevent.queue.Queue = gevent.queue.Queue()

    def produce() -> None:
        for _ in range(chunks):
            gevent.sleep(PACE)
            queue.put(f"event: chunk\ndata: {TEXT}\n\n".encode())
        queue.put(None)
    producer = gevent.spawn(produce)
    while queue.get() is not None:
        pass
    producer.join()


def sleep_turn(chunks: int) -> None:
    """No hand-over: the producer's pacing alone."""
    def produce() -> None:
        for _ in range(chunks):
            gevent.sleep(PACE)
    gevent.spawn(produce).join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=10)
    args = parser.parse_args()
    kinds = (("no hand-over", sleep_turn), ("gevent queue", queue_turn),
             ("ReplyFeed", feed_turn))
    for name, turn in kinds * 2:
        start = time.thread_time()
        for _ in range(args.turns // args.streams):
            gevent.joinall([gevent.spawn(turn, args.chunks) for _ in range(args.streams)])
        spent = (time.thread_time() - start) / (args.turns // args.streams * args.streams)
        print(f"{name}: {spent * 1e6:.0f} µs CPU per turn of {args.chunks} chunks", flush=True)


if __name__ == "__main__":
    main()
