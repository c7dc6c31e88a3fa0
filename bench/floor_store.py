"""The storage floor: what the app's storage work alone costs per chat turn (issue #23).

    flock /tmp/bench.lock .venv/bin/python bench/floor_store.py [--streams 8 32 50] [--rounds 8] [--app]

Two groups of lean servers (bench/lean_server.py), `--workers` processes each (2, like the app's
workers), each group on its own port and database: `plain` (the lean server's one table, one
index) and `app-store` (the same turn whose storage is the app's own, statement for statement:
bench/lean_store.py `AppStore`). One fake Claude (bench_procs.py fake, 20 ms between events)
serves both; the client processes (bench_procs.py lean-clients, as many as the workers) each
own every k-th stream with a socket to each group, and every stream's first turn on each is a
warm-up. At each stream count, rounds of bursts (every stream starts at one wall-clock instant)
alternate between the groups, the order flipping every round. CPU per turn: the run time (`bench_procs.cpu_seconds`) of
each group's process tree from /proc over all rounds at that stream count (what an app turn
asks of its memory process runs while later rounds do; until the eleventh session only its
own rounds counted; with `--app` each setting starts and ends once the app is quiet,
`chat_bench.wait_quiet`, since the twelfth session), divided by its turns; TTFT: sending
the frame to the first text chunk, p50 and p95. The ratio app-store ÷ plain is the share of
the app's CPU per turn its storage work explains over the lean server's. No process shares a
GIL with another: the fake, the groups, the clients and this driver each have their own.

Both groups send the same system prompt: the app's shape (a persona block of about 1,500
characters with a cache breakpoint, then the time), which the app-store group records with
each reply as the app's prompt inspector does.

With `--app`, a third group in the same interleaved rounds (the order rotating): the app itself
(`python -m src.app`, `--workers` workers, its whole process tree: master, workers, memory
process) over its WebSocket, so one run tells how far the app sits above each floor (app ÷
plain is the chat bench's "app CPU ÷ lean", app ÷ app-store what is left once the storage the
product keeps is paid). The lean groups then build their prompts from the app's own system
prompt (as the chat bench's lean server does), and every stream sends ceil(8 / N) turns a
round, as in the chat bench (one stream: 8 in a row).
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

from bench.bench_clients import bodies_by_slot, system_text  # noqa: E402
from bench.bench_procs import Child, cpu_seconds, free_port, serve_app, tree_pids  # noqa: E402
from bench.chat_bench import LEAN, ROUND_TURNS, START_DELAY, pct, wait_quiet  # noqa: E402

GROUPS = ("plain", "app-store")
APP = "ws"  # the app's group: its turns go over its WebSocket
LABELS = {"plain": "plain", "app-store": "app-store", APP: "app (WebSocket)"}
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


def burst(pids: list[int], clients: list[Child], kind: str, streams: int, turns: int
          ) -> tuple[list[float], float]:
    """One burst of `streams` streams, `turns` turns each, on the group named `kind`: the
    TTFTs and the CPU its process trees (`pids`, taken now: a replaced worker counts) spent
    meanwhile."""
    before = cpu_seconds(pids)
    at = time.time() + START_DELAY
    for client in clients:
        client.send(json.dumps({"kind": kind, "turns": turns, "at": at, "n": streams}))
    ttfts = [t for client in clients for t in client.read()["ttfts"]]
    return ttfts, cpu_seconds(pids) - before


def group_pids(group: int | list[Child]) -> list[int]:
    """The process trees of a group: the app's (its master's pid) or the lean servers'."""
    return tree_pids(group) if isinstance(group, int) else \
        [pid for server in group for pid in tree_pids(server.proc.pid)]


def compare(groups: dict[str, int | list[Child]], clients: list[Child], streams: int,
            rounds: int, turns: int) -> str:
    """Interleaved rounds of the groups at `streams` (the order rotating); one table row."""
    kinds = list(groups)
    ttfts: dict[str, list[float]] = {kind: [] for kind in kinds}
    app = next((group for group in groups.values() if isinstance(group, int)), None)

    def quiet() -> None:  # the app's background work (titles, cortex updates) is done
        if app is not None:
            wait_quiet(lambda: tree_pids(app))
    quiet()
    before = {kind: cpu_seconds(group_pids(groups[kind])) for kind in kinds}
    for i in range(rounds):
        for kind in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:
            got, _ = burst(group_pids(groups[kind]), clients, kind, streams, turns)
            ttfts[kind] += got
    quiet()
    # A group's turns carry all it ran in the setting, not only in its own rounds: what an app
    # turn asks of its memory process (titles, cortex updates) runs while later rounds do.
    cpu = {kind: cpu_seconds(group_pids(groups[kind])) - before[kind] for kind in kinds}
    per_turn = {kind: cpu[kind] / (rounds * streams * turns) * 1000 for kind in kinds}
    plain, store = per_turn["plain"], per_turn["app-store"]
    cells = [f"{per_turn[kind]:.2f} ms" for kind in kinds] + [f"{store / plain:.2f}"]
    if APP in per_turn:
        cells += [f"{per_turn[APP] / plain:.2f}", f"{per_turn[APP] / store:.2f}"]
    cells += [f"{pct(ttfts[kind], 50):.0f} / {pct(ttfts[kind], 95):.0f} ms" for kind in kinds]
    return f"| {streams} | {turns} | " + " | ".join(cells) + " |"


def template_from_app(fake: Child, leans: list[Child]) -> None:
    """The lean servers' prompt: the app's system prompt of stream 0 (its persona's name
    replaced by each session's), model and max_tokens, from the fake's last requests."""
    body = bodies_by_slot(fake.ask("bodies")["bodies"])[0]
    system = body.get("system") or [{"type": "text", "text": system_text(body)}]
    template = {"system": system, "model": body["model"],
                "max_tokens": body.get("max_tokens") or 2048, "name": "Bench 0"}
    for lean in leans:
        lean.ask(json.dumps(template))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[8, 32, 50])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--app", action="store_true",
                        help="the app over its WebSocket as a third group")
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    with ExitStack() as stack:
        fake = Child("fake", "0.02", "10", "anthropic")
        stack.callback(fake.close)
        leans = {kind: start_group(stack, kind, fake.hello["url"], args.workers)
                 for kind in GROUPS}
        urls = [f"{kind}={group[0].hello['url']}" for kind, group in leans.items()]
        groups: dict[str, int | list[Child]] = dict(leans)
        if args.app:
            data = stack.enter_context(tempfile.TemporaryDirectory())
            base, proc = stack.enter_context(serve_app(fake.hello["url"], data, args.workers))
            groups[APP] = proc.pid
            clients = [Child("clients", base, str(i), str(args.workers),
                             *(f"ws:{url}" for url in urls)) for i in range(args.workers)]
        else:
            clients = [Child("lean-clients", str(i), str(args.workers), *urls)
                       for i in range(args.workers)]
        for client in clients:
            stack.callback(client.close)
        for client in clients:
            client.send(json.dumps({"grow": max(args.streams)}))
        for client in clients:
            client.read()
        if args.app:
            template_from_app(fake, [server for group in leans.values() for server in group])
        print(f"`bench/floor_store.py` {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"{args.workers} processes per group, fake 20 ms between events, {args.rounds} "
              f"rounds each, interleaved\n")
        names = list(groups)
        heads = [f"CPU per turn {LABELS[kind]}" for kind in names] + ["app-store ÷ plain"]
        if args.app:
            heads += ["app ÷ plain", "app ÷ app-store"]
        heads += [f"TTFT p50 / p95 {LABELS[kind]}" for kind in names]
        print("| streams | turns per stream and round | " + " | ".join(heads) + " |")
        print("|---" * (len(heads) + 2) + "|", flush=True)
        for n in args.streams:
            turns = -(-ROUND_TURNS // n) if args.app else 1
            print(compare(groups, clients, n, args.rounds, turns), flush=True)


if __name__ == "__main__":
    main()
