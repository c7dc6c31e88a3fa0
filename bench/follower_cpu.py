"""CPU of following a reply in its own process, alone: the hop from the reply to an SSE response.

    .venv/bin/python bench/follower_cpu.py --a HEAD~1 --b HEAD [--streams 8 32] [--rounds 150]

No server, no upstream: under gevent (as a worker runs), N replies at once each append 10 pieces
with a 2 ms pause between them and one follower per reply (`GenerationHub.follow`, what an SSE
response reads) formats every event it gets as SSE. Each revision runs in its own process, the
two alternating three times; printed: CPU per reply with its follower, of the replies alone, and
the difference (the follower's cost). `ab_cpu.py` cannot resolve a change this small on a shared
machine (its noise is about ±0.7 ms per turn); this can.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ab_cpu import export  # noqa: E402

CHILD = """
import json, sys, time
from gevent import monkey; monkey.patch_all()
import gevent
from src.utils.services import chat_events as events
from src.utils.services.generations import Generation, GenerationHub
hub, done = GenerationHub(None), events.done(2, "x", {}, "end_turn", {})
def reply(g):
    for i in range(10):
        gevent.sleep(0.002)
        g.append("word %d " % i)
    g.finish(done)
def follow(g):
    for event in hub.follow(g, 0):
        events.to_sse(event, "2:0")
def per_reply(n, rounds, followed):
    start = time.process_time()
    for _ in range(rounds):
        gens = [Generation("s", 1, 2) for _ in range(n)]
        jobs = [gevent.spawn(reply, g) for g in gens]
        jobs += [gevent.spawn(follow, g) for g in gens] if followed else []
        gevent.joinall(jobs)
    return (time.process_time() - start) / (n * rounds) * 1e6
per_reply(8, 10, True)
n, rounds = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps([per_reply(n, rounds, True), per_reply(n, rounds, False)]))
"""


def measure(tree: Path, streams: int, rounds: int) -> list[float]:
    """[µs per reply followed, µs per reply alone] in a fresh process on `tree`."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(streams), str(rounds)], cwd=tree,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True)
    parser.add_argument("--b", required=True)
    parser.add_argument("--streams", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    with ExitStack() as stack:
        trees = {name: export(rev, stack.enter_context(tempfile.TemporaryDirectory()))
                 for name, rev in (("A", args.a), ("B", args.b))}
        print(f"A = {args.a}, B = {args.b}: µs of CPU per reply (median of 3 alternated runs)")
        print("| streams | followed A / B | alone A / B | follower A → B |")
        print("|---|---|---|---|")
        for n in args.streams:
            got: dict[str, list[list[float]]] = {"A": [], "B": []}
            for i in range(3):
                for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
                    got[name].append(measure(trees[name], n, args.rounds))
            med = {k: [statistics.median(r[j] for r in v) for j in (0, 1)]
                   for k, v in got.items()}
            print(f"| {n} | {med['A'][0]:.0f} / {med['B'][0]:.0f} | {med['A'][1]:.0f} / "
                  f"{med['B'][1]:.0f} | {med['A'][0] - med['A'][1]:.0f} → "
                  f"{med['B'][0] - med['B'][1]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
