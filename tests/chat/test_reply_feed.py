"""A reply's followers in its own process (services/reply_feed.py through GenerationHub.follow):
the reply's thread hands the text over; what is pending when a follower looks comes as one
chunk, in order, never twice, however the follower's pace and the reply's interleave."""
import threading

from src.utils.services import chat_events as events
from src.utils.services.generations import Generation, GenerationHub
from tests.chat.chat_support import TIMEOUT

PIECES = [f"{i}," for i in range(3000)]
DONE = events.done(2, "".join(PIECES), {}, "end_turn", {})


def _text(got: list) -> str:
    return "".join(e.data["text"] for e in got if e.type == "chunk")


def test_pending_pieces_come_as_one_chunk_then_the_end():
    generation, hub = Generation("s", 1, 2), GenerationHub(None)
    for piece in ("a", "b", "c"):
        generation.append(piece)
    follower = hub.follow(generation, 1)
    assert next(follower) == events.chunk("bc")
    generation.append("d")
    generation.append("e")
    assert next(follower) == events.chunk("de")
    generation.finish(DONE)
    assert list(follower) == [DONE]


def test_followers_joining_mid_stream_get_every_piece_once_in_order():
    generation, hub = Generation("s", 1, 2), GenerationHub(None)
    joined = [threading.Event() for _ in range(5)]  # at pieces 0, 700, … 2800
    results: list[list] = [[] for _ in joined]

    def follow(n: int) -> None:
        joined[n].wait(TIMEOUT)
        results[n] = list(hub.follow(generation, 0))

    followers = [threading.Thread(target=follow, args=(n,)) for n in range(len(joined))]
    for thread in followers:
        thread.start()
    try:
        for i, piece in enumerate(PIECES):
            generation.append(piece)
            if i % 700 == 0:
                joined[i // 700].set()
    finally:
        generation.finish(DONE)
    for thread in followers:
        thread.join(TIMEOUT)
    for got in results:
        assert _text(got) == "".join(PIECES) and got[-1] == DONE
        assert all(e.type == "chunk" for e in got[:-1])


def test_a_detached_follower_stops_and_the_reply_goes_on():
    generation, hub = Generation("s", 1, 2), GenerationHub(None)
    detached = threading.Event()
    generation.append("a")
    follower = hub.follow(generation, 0, detached)
    assert next(follower) == events.chunk("a")
    detached.set()
    assert list(follower) == []
    generation.append("b")
    generation.finish(DONE)
    assert generation.text() == "ab"
    assert list(hub.follow(generation, 1)) == [events.chunk("b"), DONE]
