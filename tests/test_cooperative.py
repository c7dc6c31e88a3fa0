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
              "import threading, greenlet\n"
              "from src.utils import cooperative\n"
              "seen = []\n"
              "task = cooperative.task(lambda: seen.append(threading.current_thread()), 'r-7')\n"
              "task.start(); task.join(10)\n"
              "print(isinstance(task, threading.Thread), len(seen))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "1"]


def test_a_started_task_runs_up_to_its_first_wait_before_what_was_scheduled_earlier():
    """A burst's frames are all scheduled before the first reply's greenlet would run; a task
    started eagerly sends its request first (issue #23). Here: a greenlet scheduled before the
    task starts still runs after the task's first step, and the starter goes on once the task
    waits, before the task's second step."""
    script = ("from gevent import monkey; monkey.patch_all()\n"
              "import gevent\n"
              "from src.utils import cooperative\n"
              "order = []\n"
              "def reply():\n"
              "    order.append('request sent')\n"
              "    gevent.sleep(0.01)\n"
              "    order.append('first token')\n"
              "def frame():\n"
              "    gevent.spawn(order.append, 'next frame')\n"
              "    task = cooperative.task(reply, 'reply-1')\n"
              "    task.start()\n"
              "    order.append('starter goes on')\n"
              "    task.join(10)\n"
              "gevent.spawn(frame).join(10)\n"
              "print('|'.join(order))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, check=True)
    assert done.stdout.strip().split("|") == [
        "request sent", "next frame", "starter goes on", "first token"]


def test_a_task_that_fails_leaves_the_worker_running():
    """The task's greenlet has the hub as parent: an exception must end there, logged."""
    script = ("from gevent import monkey; monkey.patch_all()\n"
              "import gevent\n"
              "from src.utils import cooperative\n"
              "def boom():\n"
              "    raise ValueError('reply failed')\n"
              "def frame():\n"
              "    task = cooperative.task(boom, 'reply-1')\n"
              "    task.start(); task.join(10)\n"
              "    return 'still serving'\n"
              "print(gevent.spawn(frame).get(timeout=10))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, check=True)
    assert done.stdout.strip() == "still serving"
    assert "reply failed" in done.stderr
