"""The doorbell a chat worker rings when it queues work for the memory process (utils/doorbell.py):
heard by the listener in another object (another process opens the same path), silent and
harmless when nobody listens, and rings that pile up are heard at least once."""
import threading

from src.utils.doorbell import Doorbell

DEADLINE = 10.0  # bounds a failure only


def test_a_ring_from_elsewhere_wakes_the_listener(tmp_path):
    path = str(tmp_path / "locks" / "memory.bell")
    heard = threading.Event()
    listener = Doorbell(path)
    listener.listen(heard.set)
    try:
        for _ in range(3):
            heard.clear()
            Doorbell(path).ring()
            assert heard.wait(DEADLINE)
    finally:
        listener.close()


def test_ringing_with_nobody_listening_does_nothing(tmp_path):
    path = str(tmp_path / "locks" / "memory.bell")
    Doorbell(path).ring()  # no bell yet
    listener = Doorbell(path)
    listener.listen(lambda: None)
    listener.close()
    Doorbell(path).ring()  # a bell nobody listens to


def test_rings_while_the_listener_is_busy_are_heard_after(tmp_path):
    path = str(tmp_path / "locks" / "memory.bell")
    busy, release, calls = threading.Event(), threading.Event(), []

    def answer() -> None:
        calls.append(1)
        busy.set()
        release.wait(DEADLINE)
    listener = Doorbell(path)
    listener.listen(answer)
    try:
        Doorbell(path).ring()
        assert busy.wait(DEADLINE)
        busy.clear()
        for _ in range(5):
            Doorbell(path).ring()
        release.set()
        assert busy.wait(DEADLINE)  # heard again once the first answer is done
    finally:
        release.set()
        listener.close()
