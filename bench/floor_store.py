"""The storage floor: what the app's storage work alone costs per chat turn (issue #23).

    flock /tmp/bench.lock .venv/bin/python bench/floor_store.py [--streams 8 32 50] [--rounds 8]

Two groups of lean servers (bench/lean_server.py), `--workers` processes each (2, like the app's
workers), each group on its own port and database: `plain` (the lean server's one table, one
index) and `app-store` (the same turn whose storage is the app's own, statement for statement:
bench/lean_store.py `AppStore`). One fake Claude (bench_procs.py fake, 20 ms between events)
serves both; the client processes (bench_procs.py lean-clients, as many as the workers) each
own every k-th stream with a socket to each group, and every stream's first turn on each is a
warm-up. At each stream count, rounds of bursts (every stream starts at one wall-clock instant)
alternate between the groups, the order flipping every round. CPU per turn: the run time (`bench_procs.cpu_seconds`) of
each group's process tree from /proc over its own rounds, divided by its turns; TTFT: sending
the frame to the first text chunk, p50 and p95. The ratio app-store ÷ plain is the share of
the app's CPU per turn its storage work explains over the lean server's. No process shares a
GIL with another: the fake, the groups, the clients and this driver each have their own.

Both groups send the same system prompt: the app's shape (a persona block of about 1,500
characters with a cache breakpoint, then the time), which the app-store group records with
each reply as the app's prompt inspector does.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_procs import Child, cpu_seconds, free_port, tree_pids  # noqa: E402
from bench.chat_bench import LEAN, START_DELAY, pct  # noqa: E402

GROUPS = ("plain", "app-store")
PERSONA = ("You are Bench 0, a warm and curious companion who remembers what the person tells "
           "you and asks about it later. ") * 14
TEMPLATE = {"system": [{"type": "text", "text": PERSONA, "cache_control": {"type": "ephemeral"}},
                       {"type": "text", "text": "The current date and time: Friday, 27 November "
                                                "2026, 18:00 (UTC)."}],
            "model": "claude-sonnet-5-5", "max_tokens": 2048, "name": "Bench 0"}


def start_group(stack: ExitStack, store: str, fake_url: str, workers: int) -> list[Child]:
    """`workers` lean server processes with `store`, on one port and one database."""
    data = stack.enter_context(tempfile.TemporaryDirectory())
    port = free_port()
    servers = [Child(str(port), fake_url, str(Path(data) / "lean.db"), "anthropic", store,
                     script=str(LEAN)) for _ in range(workers)]
    for server in servers:
        stack.callback(server.close)
        server.ask(json.dumps(TEMPLATE))
    return servers


def burst(group: list[Child], clients: list[Child], kind: str, streams: int
          ) -> tuple[list[float], float]:
    """One burst of `streams` turns on the group named `kind`: the TTFTs and the CPU its
    process trees spent meanwhile."""
    pids = [pid for server in group for pid in tree_pids(server.proc.pid)]
    before = cpu_seconds(pids)
    at = time.time() + START_DELAY
    for client in clients:
        client.send(json.dumps({"kind": kind, "turns": 1, "at": at, "n": streams}))
    ttfts = [t for client in clients for t in client.read()["ttfts"]]
    return ttfts, cpu_seconds(pids) - before


def compare(groups: dict[str, list[Child]], clients: list[Child], streams: int,
            rounds: int) -> str:
    """Interleaved rounds of both groups at `streams`; one table row."""
    cpu = dict.fromkeys(GROUPS, 0.0)
    ttfts: dict[str, list[float]] = {kind: [] for kind in GROUPS}
    for i in range(rounds):
        for kind in GROUPS if i % 2 == 0 else GROUPS[::-1]:
            got, spent = burst(groups[kind], clients, kind, streams)
            ttfts[kind] += got
            cpu[kind] += spent
    per_turn = {kind: cpu[kind] / (rounds * streams) * 1000 for kind in GROUPS}
    plain, app = (per_turn[kind] for kind in GROUPS)
    cells = [f"{pct(ttfts[kind], 50):.0f} / {pct(ttfts[kind], 95):.0f} ms" for kind in GROUPS]
    return (f"| {streams} | {plain:.2f} ms | {app:.2f} ms | {app / plain:.2f} | {cells[0]} | "
            f"{cells[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[8, 32, 50])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    with ExitStack() as stack:
        fake = Child("fake", "0.02", "10", "anthropic")
        stack.callback(fake.close)
        groups = {kind: start_group(stack, kind, fake.hello["url"], args.workers)
                  for kind in GROUPS}
        urls = [f"{kind}={group[0].hello['url']}" for kind, group in groups.items()]
        clients = [Child("lean-clients", str(i), str(args.workers), *urls)
                   for i in range(args.workers)]
        for client in clients:
            stack.callback(client.close)
        for client in clients:
            client.send(json.dumps({"grow": max(args.streams)}))
        for client in clients:
            client.read()
        print(f"`bench/floor_store.py` {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"{args.workers} processes per group, fake 20 ms between events, {args.rounds} "
              f"rounds each, interleaved\n")
        print("| streams | CPU per turn plain | CPU per turn app-store | app-store ÷ plain | "
              "TTFT p50 / p95 plain | TTFT p50 / p95 app-store |")
        print("|---|---|---|---|---|---|", flush=True)
        for n in args.streams:
            print(compare(groups, clients, n, args.rounds), flush=True)


if __name__ == "__main__":
    main()
