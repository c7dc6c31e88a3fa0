"""gevent's blocking monitor, switched on by `PERSONA_BLOCKING_REPORT=path` (the robustness tests).

gevent's monitor thread notices when the event loop has not switched greenlets for
`max_blocking_time` (BLOCK_SECONDS) and reports the blocked stack; every report (repeated each
period while a block lasts) is appended to the file as one JSON line. Each line also carries how
long the loop's thread has gone without a switch (`wall`) and how much CPU that thread used in
that time (`cpu`, its own thread clock). A block that computes has `cpu` close to `wall`; a loop
that only waited for a core (a loaded machine, another process running) has `wall` without
`cpu`, so a test can fail on work done on the loop and never on the machine's load.
"""
from __future__ import annotations

import json
import os
import time
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
    from gevent import events

    gevent.config.monitor_thread = True
    gevent.config.max_blocking_time = BLOCK_SECONDS
    hub = gevent.get_hub()
    hub.start_periodic_monitoring_thread()
    switch = _LastSwitch(greenlet.settrace(None))
    greenlet.settrace(switch)
    clock = time.pthread_getcpuclockid(hub.thread_ident)

    def report(event: object) -> None:
        """Runs in gevent's monitor thread for every event; writes the blocks."""
        if not isinstance(event, events.EventLoopBlocked):
            return
        since, cpu_since = switch.wall, switch.cpu
        record = {"pid": os.getpid(), "since": since,
                  "wall": round(time.perf_counter() - since, 3),
                  "cpu": round(time.clock_gettime(clock) - cpu_since, 3),
                  "greenlet": str(event.greenlet), "report": "\n".join(map(str, event.info))}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    events.subscribers.append(report)
