"""CPU of an idle app, per process: what the server costs while nobody chats (issue #23).

    .venv/bin/python bench/idle_cpu.py [--workers 2] [--turns 8] [--settle 5] [--seconds 20]

Starts `python -m src.app` (with a fake Claude in its own process), runs `--turns` WebSocket
turns on as many sockets (so both workers, the memory process's title runners and cortex
worker have had work), waits `--settle` seconds, then reads the CPU of the master, each
gunicorn worker (with its helpers) and the memory process from /proc over `--seconds`, and
prints milliseconds of CPU per second for each: utime + stime (10 ms ticks) and the scheduler's
nanosecond count (`bench_procs.cpu_seconds`), which an idle process needs. `--turns 0` measures a freshly booted app.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import websocket

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_clients import new_session, ws_turn  # noqa: E402
from bench.bench_procs import (  # noqa: E402
    Child,
    app_parts,
    cpu_seconds,
    serve_app,
    tick_seconds,
    tree_pids,
    worker_pids,
)


def _turns(base: str, count: int) -> None:
    """`count` turns, one per new socket (gunicorn hands new connections to either worker)."""
    for index in range(count):
        session = new_session(base, f"Idle {index}")
        ws = websocket.create_connection(base.replace("http", "ws") + "/ws/chat", timeout=60)
        try:
            ws_turn(ws, session)
        finally:
            ws.close()


def _parts(master: int) -> dict[str, list[int]]:
    """Each process (with its helpers) by name: master, worker <pid>, memory."""
    parts = {"master": [master]}
    memory = set(app_parts(master)["memory"])
    for child in worker_pids(master):
        name = "memory" if child in memory else f"worker {child}"
        parts[name] = tree_pids(child)
    return parts


def measure(master: int, seconds: float) -> dict[str, tuple[float, float]]:
    """Milliseconds of CPU per second of each part over `seconds`: (utime + stime, schedstat)."""
    parts = _parts(master)
    before = {name: (tick_seconds(pids), cpu_seconds(pids)) for name, pids in parts.items()}
    start = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - start
    return {name: ((tick_seconds(pids) - before[name][0]) * 1000 / elapsed,
                   (cpu_seconds(pids) - before[name][1]) * 1000 / elapsed)
            for name, pids in parts.items()}


def main() -> None:
    """Prints one line per process and the total."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    fake = Child("fake", "0.0", "4", script=str(ROOT / "bench" / "bench_procs.py"))
    try:
        with tempfile.TemporaryDirectory() as data, \
                serve_app(fake.hello["url"], data, args.workers) as (base, proc):
            _turns(base, args.turns)
            time.sleep(args.settle)
            result = measure(proc.pid, args.seconds)
    finally:
        fake.close()
    print(f"{'ms of CPU per s':>15}  utime+stime  schedstat")
    for name, (ticks, exact) in result.items():
        print(f"{name:>15}  {ticks:11.2f}  {exact:9.2f}")
    print(f"{'total':>15}  {sum(t for t, _ in result.values()):11.2f}  "
          f"{sum(e for _, e in result.values()):9.2f}")


if __name__ == "__main__":
    main()
