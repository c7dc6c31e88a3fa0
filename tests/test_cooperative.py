"""`cooperative.offload`: heavy steps run a bounded number at a time and the rest wait in a
bounded queue; one more is refused at once with `Busy` (a 503 `server_busy` over HTTP). And
`cooperative.task`, what a reply runs in."""
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from src.utils import cooperative
from src.utils.cooperative import Busy, _HeavyPool

ROOT = Path(__file__).resolve().parents[1]


def test_steps_beyond_the_running_and_waiting_bound_are_refused_at_once():
    pool = _HeavyPool(threads=1, queue=2)
    release, entered = threading.Event(), threading.Semaphore(0)

    def step(value):
        entered.release()
        assert release.wait(30)
        return value

    with ThreadPoolExecutor(3) as runner:
        admitted = [runner.submit(pool.run, step, (n,)) for n in range(3)]
        assert entered.acquire(timeout=30)  # one runs; the other two wait for their turn
        deadline = time.monotonic() + 30
        while pool._admitted < 3:  # no event says "admitted"; the deadline bounds a failure
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with pytest.raises(Busy):
            pool.run(step, ("refused",))
        release.set()
        assert sorted(f.result(timeout=30) for f in admitted) == [0, 1, 2]
    assert pool.run(lambda: "free again", ()) == "free again"


def test_a_refusal_of_the_step_itself_reaches_the_caller():
    pool = _HeavyPool(threads=1, queue=0)

    def refuse():
        raise ValueError("bad picture")
    with pytest.raises(ValueError, match="bad picture"):
        pool.run(refuse, ())
    assert pool.run(lambda: 1, ()) == 1


def test_a_task_is_a_named_daemon_thread_without_gevent():
    ran = threading.Event()
    task = cooperative.task(ran.set, "reply-7")
    assert isinstance(task, threading.Thread) and task.daemon and task.name == "reply-7"
    task.start()
    task.join(10)
    assert ran.is_set()


def test_a_task_is_a_bare_greenlet_in_a_gevent_worker():
    """Under gevent a chat turn's reply starts a greenlet, not a `threading.Thread` (a greenlet
    plus the thread's bookkeeping: twice the CPU to start and end one)."""
    script = ("from gevent import monkey; monkey.patch_all()\n"
              "import gevent\n"
              "from src.utils import cooperative\n"
              "seen = []\n"
              "task = cooperative.task(lambda: seen.append(1), 'reply-7')\n"
              "task.start(); task.join(10)\n"
              "print(type(task) is gevent.Greenlet, seen)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, check=True)
    assert done.stdout.split() == ["True", "[1]"]
