"""How the chat bench's WebSockets fall over the app's workers, on fresh apps.

    flock /tmp/bench.lock .venv/bin/python bench/worker_spread.py [--rev .] [--apps 3]

The bench's own pattern (chat_bench.py): two client processes (`bench_procs.py clients`) open
their slots at the same time, slot i in process i mod 2, each slot a persona, a session, a
WebSocket and one warm-up turn against a fake Claude (20 ms between events). After the first n
slots are open (n in `--streams`), the established connections each worker holds are read from
`/proc` (tests/support/worker_sockets.py): a socket stays with the worker that accepted it, so
this is how a burst over the first n streams is shared. `--rev` is a git revision (exported
with `git archive`, as `ab_cpu.py` does) or `.` (this working tree).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ab_cpu import export  # noqa: E402
from bench.bench_procs import Child, serve_app  # noqa: E402
from tests.support.worker_sockets import connections_per_worker  # noqa: E402

WORKERS = 2


def one_app(root: Path, streams: list[int]) -> list[list[int]]:
    """The split per worker after the first n slots, for each n of `streams` (growing)."""
    fake = Child("fake", "0.02", "10")
    splits = []
    try:
        with tempfile.TemporaryDirectory() as data_dir, \
                serve_app(fake.hello["url"], data_dir, WORKERS, root=root) as (base, proc):
            clients = [Child("clients", base, str(i), str(WORKERS)) for i in range(WORKERS)]
            try:
                for n in streams:
                    for client in clients:
                        client.send(json.dumps({"grow": n}))
                    for client in clients:
                        client.read()
                    held = connections_per_worker(proc.pid, int(base.rsplit(":", 1)[1]))
                    splits.append([held[pid] for pid in sorted(held)])
            finally:
                for client in clients:
                    client.close()
    finally:
        fake.close()
    return splits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=".")
    parser.add_argument("--apps", type=int, default=3)
    parser.add_argument("--streams", type=int, nargs="+", default=[8, 32, 50])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tree:
        root = export(args.rev, tree)
        runs = [one_app(root, args.streams) for _ in range(args.apps)]
    for i, n in enumerate(args.streams):
        print(f"{n} streams: " + ", ".join(" / ".join(map(str, run[i])) for run in runs))


if __name__ == "__main__":
    main()
