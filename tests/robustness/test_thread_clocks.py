"""`ThreadClocks` (src/blocking_report.py), the clock every stall bound is net of: what a
process's threads ran and waited stays counted after they end. Summed over the live threads
only, the figure fell when a thread ended; a gap measured across that end was charged the
ended thread's waits as if the server had stalled (a stall test failed that way under load)."""
import os
import threading
import time

from src.blocking_report import ThreadClocks

SPIN_SECONDS = 0.05  # the CPU the ended thread used: what must not drop out of the sum


def _spin(spun: threading.Event, release: threading.Event) -> None:
    began = time.thread_time()
    while time.thread_time() - began < SPIN_SECONDS:
        pass
    spun.set()
    release.wait(30)


def test_an_ended_thread_still_counts():
    clocks = ThreadClocks()
    spun, release = threading.Event(), threading.Event()
    worker = threading.Thread(target=_spin, args=(spun, release))
    worker.start()
    assert spun.wait(30)
    ran_alive, waited_alive = clocks.read()
    release.set()
    worker.join(30)
    ran_after, waited_after = clocks.read()
    assert ran_after >= ran_alive >= SPIN_SECONDS
    assert waited_after >= waited_alive


def test_another_process_is_read_by_pid():
    clocks = ThreadClocks(os.getpid())
    first = clocks.read()
    began = time.thread_time()
    while time.thread_time() - began < SPIN_SECONDS:
        pass
    assert clocks.read()[0] - first[0] >= SPIN_SECONDS
