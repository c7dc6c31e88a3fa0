"""gevent's blocking monitor, switched on by `PERSONA_BLOCKING_REPORT=path` (the robustness tests).

gevent's monitor thread notices when the event loop has not switched greenlets for
`max_blocking_time` (BLOCK_SECONDS); each time it does (again every period while a block lasts),
the blocked stack is appended to the file as one JSON line (gevent's own report is replaced: see
`install`). Each line also carries how
long the loop's thread has gone without a switch (`wall`) and how much CPU that thread used in
that time (`cpu`, its own thread clock). A block that computes has `cpu` close to `wall`; a loop
that only waited for a core (a loaded machine, another process running) has `wall` without
`cpu`, so a test can fail on work done on the loop and never on the machine's load.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
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


def install(path: str) -> None:
    """Starts the monitor for the calling thread's hub (call it in the loop's thread, after the
    app is built: its start-up is not a block of the loop)."""
    import gevent
    import greenlet
    from gevent._monitor import _MonitorEntry

    gevent.config.monitor_thread = True
    gevent.config.max_blocking_time = BLOCK_SECONDS
    hub = gevent.get_hub()
    monitor: Any = hub.start_periodic_monitoring_thread()
    tracer = monitor._greenlet_tracer
    switch = _LastSwitch(greenlet.settrace(None))
    greenlet.settrace(switch)
    clock = time.pthread_getcpuclockid(hub.thread_ident)

    def check(watched: Any) -> None:
        """Runs in gevent's monitor thread every BLOCK_SECONDS, in place of gevent's own
        `monitor_blocking` (same tracer, same test); writes a block with its stack."""
        blocked = tracer.did_block_hub(watched)
        if not blocked:
            return
        since, cpu_since = switch.wall, switch.cpu
        record = {"pid": os.getpid(), "since": since,
                  "wall": round(time.perf_counter() - since, 3),
                  "cpu": round(time.clock_gettime(clock) - cpu_since, 3),
                  "greenlet": str(blocked[1]), "report": _stack(watched)}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    # gevent's report also lists every greenlet, walking all of the process's objects
    # (`gc.get_objects()`) while holding the GIL: the report itself stalled the loop it
    # reported on, by a few hundred milliseconds each time. The stack alone is enough.
    monitor._monitoring_functions[0] = _MonitorEntry(check, BLOCK_SECONDS)


def _stack(hub: Any) -> str:
    frame = sys._current_frames().get(hub.thread_ident)
    return "".join(traceback.format_stack(frame)) if frame is not None else "(no frame)"
