"""gevent's blocking monitor, switched on by `PERSONA_BLOCKING_REPORT=path` (the robustness tests).

gevent's monitor thread notices when the event loop has not switched greenlets for
`max_blocking_time` (BLOCK_SECONDS); each time it does (again every period while a block lasts),
the blocked stack is appended to the file as one JSON line (gevent's own report is replaced: see
`install`). Each line also carries how long the loop's thread has gone without a switch
(`wall`), how much CPU that thread used in that time (`cpu`, its own thread clock), and
`stalled`: `wall` less the time the machine kept the worker from running, which is the run
delay of all its threads (runnable, waiting for a CPU: `/proc/self/task/<tid>/schedstat`;
every thread counts, since one that waits for a CPU while holding the GIL keeps the loop
waiting: the monitor's own thread too, which holds the GIL while it reads these counters) and
the time the loop thread was seen in a disk wait (state `D`). `others_cpu`, the CPU the
worker's other threads used meanwhile, says whether one of them held the GIL computing. A
block that computes has `cpu` close to `wall`; one that sleeps in a system call (a lock, a
pipe, a sleep) has `stalled` close to `wall` without `cpu`; a loop that only waited for a core
or a disk has neither, so a test can fail on what the worker did and never on the machine's load.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

BLOCK_SECONDS = 0.1


class _LastSwitch:
    """A greenlet tracer (it runs in the loop's thread): when, in wall and thread CPU time, the
    last switch happened; chains to the tracer it replaced (gevent's own)."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()

    def __call__(self, event: str, args: Any) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.thread_time()
        if self.previous is not None:
            self.previous(event, args)


def install(path: str) -> Callable[[], None]:
    """Starts the monitor for the calling thread's hub (call it in the loop's thread, after the
    app is built: its start-up is not a block of the loop); returns the function that stops it
    (once the worker stops serving: its exit is not a block of the loop either)."""
    import gevent
    import greenlet
    from gevent._monitor import _MonitorEntry

    with open(path, "a", encoding="utf-8"):  # it exists once the monitor runs: an empty report
        pass                                  # means no block, a missing one no monitor
    gevent.config.monitor_thread = True
    gevent.config.max_blocking_time = BLOCK_SECONDS
    hub = gevent.get_hub()
    monitor: Any = hub.start_periodic_monitoring_thread()
    tracer = monitor._greenlet_tracer
    switch = _LastSwitch(greenlet.settrace(None))
    greenlet.settrace(switch)
    clock = time.pthread_getcpuclockid(hub.thread_ident)
    waits = _Waits(threading.get_native_id())

    def check(watched: Any) -> None:
        """Runs in gevent's monitor thread every BLOCK_SECONDS, in place of gevent's own
        `monitor_blocking` (same tracer, same test); writes a block with its stack."""
        waits.sample()
        blocked = tracer.did_block_hub(watched)
        if not blocked:
            return
        since, cpu_since = switch.wall, switch.cpu
        wall = time.perf_counter() - since
        waited, disk, busy = waits.since(since)
        cpu = time.clock_gettime(clock) - cpu_since
        record = {"pid": os.getpid(), "since": since, "wall": round(wall, 3),
                  "cpu": round(cpu, 3), "others_cpu": round(max(0.0, busy - cpu), 3),
                  "waited": round(waited, 3), "disk": round(disk, 3),
                  "stalled": round(max(0.0, wall - waited - disk), 3),
                  "greenlet": str(blocked[1]), "report": _stack(watched)}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    # gevent's report also lists every greenlet, walking all of the process's objects
    # (`gc.get_objects()`) while holding the GIL: the report itself stalled the loop it
    # reported on, by a few hundred milliseconds each time. The stack alone is enough.
    monitor._monitoring_functions[0] = _MonitorEntry(check, BLOCK_SECONDS)
    return monitor.kill


def _stack(hub: Any) -> str:
    frame = sys._current_frames().get(hub.thread_ident)
    return "".join(traceback.format_stack(frame)) if frame is not None else "(no frame)"


class _Waits:
    """The worker's waits that are the machine's doing, sampled by the monitor thread every
    period: the summed run delay of the process's threads and the time the loop thread spent
    in a disk wait (with, for the report, the CPU all the threads used), each kept with the
    time it was read, so a block's share is the difference to the last sample taken before the
    block began."""

    def __init__(self, loop_tid: int) -> None:
        self._loop = loop_tid
        self._disk = 0.0
        self._last = time.perf_counter()
        self._clocks = ThreadClocks()
        self._samples: collections.deque = collections.deque(maxlen=1200)  # 2 minutes

    def sample(self) -> None:
        """Reads the counters now (in the monitor thread)."""
        now = time.perf_counter()
        if _state(self._loop) == "D":
            self._disk += now - self._last
        self._last = now
        ran, delay = self._clocks.read()
        self._samples.append((now, delay, self._disk, ran))

    def since(self, began: float) -> tuple[float, float, float]:
        """(run delay, disk wait, CPU of all threads) in seconds from the last sample before
        `began` to now."""
        _, delay, disk, ran = self._samples[-1]
        earlier = [s for s in self._samples if s[0] <= began] or [self._samples[0]]
        return delay - earlier[-1][1], disk - earlier[-1][2], ran - earlier[-1][3]


class ThreadClocks:
    """How long a process's threads have run and waited for a CPU, summed over every thread
    seen since the first read, ended ones included. A sum over the live threads alone falls
    when one ends, by all the waiting it had done: a block or a gap measured across that end
    came out larger than its wall time less every wait, and failed a loaded run with a 0.58 s
    gap whose threads had in fact waited 2.2 s. Each thread's last reading is kept; one that
    reads lower than before is a new thread on a reused id, and the old one's is kept aside."""

    def __init__(self, pid: int | str = "self") -> None:
        self._task = f"/proc/{pid}/task"
        self._seen: dict[str, tuple[int, int]] = {}
        self._ended = (0, 0)

    def read(self) -> tuple[float, float]:
        """(run, run delay) in seconds."""
        for tid in os.listdir(self._task):
            try:
                with open(f"{self._task}/{tid}/schedstat", encoding="ascii") as handle:
                    fields = handle.read().split()
            except (FileNotFoundError, ProcessLookupError):  # the thread ended meanwhile
                continue
            now = (int(fields[0]), int(fields[1]))
            before = self._seen.get(tid, (0, 0))
            if now[0] < before[0] or now[1] < before[1]:
                self._ended = (self._ended[0] + before[0], self._ended[1] + before[1])
            self._seen[tid] = now
        ran = self._ended[0] + sum(r for r, _ in self._seen.values())
        waited = self._ended[1] + sum(w for _, w in self._seen.values())
        return ran / 1e9, waited / 1e9


def _state(tid: int) -> str:
    """The thread's scheduler state letter (R, S, D, ...)."""
    try:
        with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return "?"
