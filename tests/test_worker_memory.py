"""The worker's heap knobs: the idle trim runs once after a busy spell, and never while busy."""
import gc
import threading

from src import worker_memory
from src.worker_memory import IdleTrim

DEADLINE = 10.0


def test_the_heap_is_trimmed_once_after_a_busy_spell_ends():
    state = {"busy": True}
    seen_busy = threading.Event()

    def busy() -> bool:
        if state["busy"]:
            seen_busy.set()
        return state["busy"]

    trimmer = IdleTrim(busy, idle_seconds=0.0, check_seconds=0.01)
    trimmer.start()
    try:
        assert seen_busy.wait(DEADLINE)
        assert trimmer.trims == 0  # nothing while replies stream
        state["busy"] = False
        assert trimmer.trimmed.wait(DEADLINE)
        seen_busy.clear()
        state["busy"] = True  # a second busy spell, then idle again: a second trim
        assert seen_busy.wait(DEADLINE)
        trimmer.trimmed.clear()
        state["busy"] = False
        assert trimmer.trimmed.wait(DEADLINE)
    finally:
        trimmer.stop()
    assert trimmer.trims == 2


def test_settling_the_heap_freezes_the_boot_and_raises_the_generation_0_threshold():
    before = gc.get_threshold()
    try:
        worker_memory.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == worker_memory.GEN0_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    worker_memory.limit_arenas()  # glibc or not: never raises
    assert worker_memory.trim() in (True, False)
