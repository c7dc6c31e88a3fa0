"""CPU per chat turn of the storage alone: the lean server's one table against the app's SQL (issue #23).

    .venv/bin/python bench/store_cpu.py [--processes 2] [--streams 8] [--rounds 60] [--runs 2]
        [--stores plain app app-merged app-grouped] [--dir /dev/shm]

No server, no upstream: each process runs the storage half of a chat turn the way a lean
server's greenlets do (bench/lean_store.py: `PlainStore`, the lean server's one table, and
`AppStore`, the app's own storage functions in the app's order: the session read and orphan
check, the start transaction, the change counters and the history, then the final transaction
with the prompt inspector's record, and the cortex trigger's check). `--streams` greenlets per
process under gevent each run one turn per round (the start, a 30 ms pause standing for the
reply's stream, during which the other greenlets' turns commit, then the finish), on
`--processes` processes sharing one database (as the two lean processes or the app's two
workers do). Sessions are warmed first (25 turns each: histories of 50 messages, more than the
context limit of 40). CPU per turn is each process's own (`getrusage`) over its rounds, the
processes' mean; the stores take turns (the order rotating from run to run), `--runs` times each.
`--stores` adds the floors for fewer commits (bench/lean_store.py): `app-merged`, the same
statements in two transactions a turn, and `app-grouped`, the final writes of the turns that end
together in one transaction. `--dir` puts the database elsewhere (the default is the system's
temporary directory; `/dev/shm` shows what the file system's writes cost).

What the chat bench's floors cannot tell apart from noise (one run of `floor_store.py` moves
±10 % on this machine), this tells to a few microseconds: the storage's own share of the app's
CPU per turn over the lean server's.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WARM_TURNS = 25
PAUSE_SECONDS = 0.03
STORES = ("plain", "app", "app-merged", "app-grouped")
SYSTEM = [{"type": "text", "text": ("You are Lean 0, a warm and curious companion who remembers "
                                    "what the person tells you and asks about it later. ") * 14,
           "cache_control": {"type": "ephemeral"}},
          {"type": "text", "text": "The current date and time: Friday, 27 November 2026, "
                                   "18:00 (UTC)."}]
REPLY = "Hello there, " * 12


def run_process(kind: str, path: str, first: int, streams: int, rounds: int) -> None:
    """One process's turns (the child's side): prints its CPU per turn in ms."""
    from gevent import monkey
    monkey.patch_all()
    import gevent

    store = open_store(kind, path)  # puts the repository on the path too
    from src.utils.api_request.types import SentRequest

    def turn(key: str) -> None:
        opened = store.start(key, "Hi!")
        gevent.sleep(PAUSE_SECONDS)
        body = json.dumps({"model": "m", "max_tokens": 2048, "system": SYSTEM, "stream": True,
                           "messages": [*opened.history, {"role": "user", "content": "Hi!"}]})
        sent = SentRequest("anthropic", "m", body.encode()) if store.records else None
        store.finish(opened, REPLY, sent, {"input_tokens": 10, "output_tokens": 5}, SYSTEM)

    keys = [str(first + i) for i in range(streams)]
    for _ in range(WARM_TURNS):
        gevent.joinall([gevent.spawn(turn, key) for key in keys], raise_error=True)
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(rounds):
        gevent.joinall([gevent.spawn(turn, key) for key in keys], raise_error=True)
    after = resource.getrusage(resource.RUSAGE_SELF)
    spent = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(json.dumps({"ms": spent / (rounds * streams) * 1000}), flush=True)


def measure(kind: str, processes: int, streams: int, rounds: int, where: str | None) -> float:
    """Mean CPU per turn (ms) of `processes` processes on a new database of `kind`."""
    with tempfile.TemporaryDirectory(dir=where) as data:
        path = os.path.join(data, "store.db")
        subprocess.run([sys.executable, __file__, "--create", kind, path], check=True)
        children = [subprocess.Popen([sys.executable, __file__, "--child", kind, path,
                                      str(1000 * i), str(streams), str(rounds)],
                                     stdout=subprocess.PIPE, text=True)
                    for i in range(processes)]
        figures = [json.loads(child.communicate()[0])["ms"] for child in children]
        if any(child.returncode for child in children):
            raise RuntimeError(f"a {kind} process failed")
    return sum(figures) / len(figures)


def open_store(kind: str, path: str) -> Any:
    """`kind`'s store on `path` (made, and for `app` migrated, if new)."""
    sys.path.insert(0, str(ROOT))
    from bench.lean_store import AppStore, GroupedStore, MergedStore, PlainStore
    stores = {"plain": PlainStore, "app": AppStore, "app-merged": MergedStore,
              "app-grouped": GroupedStore}
    return stores[kind](path)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        run_process(sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7]))
        return
    if sys.argv[1:2] == ["--create"]:  # once, before the processes share the database
        open_store(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--streams", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--stores", nargs="+", default=["plain", "app"], choices=STORES)
    parser.add_argument("--dir", default=None, help="where the database is made")
    args = parser.parse_args()
    print(f"`bench/store_cpu.py`: {args.processes} processes on one database "
          f"({args.dir or tempfile.gettempdir()}), {args.streams} greenlets each, "
          f"{args.rounds} rounds, ms of CPU per turn\n")
    others = [kind for kind in args.stores if kind != "plain"]
    print("| run | " + " | ".join(args.stores) + "".join(f" | {kind} − plain" for kind in others
                                                        if "plain" in args.stores) + " |")
    print("|---|" + "---|" * (len(args.stores) + (len(others) if "plain" in args.stores else 0)))
    for run in range(1, args.runs + 1):
        shift = (run - 1) % len(args.stores)
        order = args.stores[shift:] + args.stores[:shift]
        got = {kind: measure(kind, args.processes, args.streams, args.rounds, args.dir)
               for kind in order}
        cells = [f"{got[kind]:.3f}" for kind in args.stores]
        if "plain" in args.stores:
            cells += [f"{got[kind] - got['plain']:+.3f}" for kind in others]
        print(f"| {run} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
