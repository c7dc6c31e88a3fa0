"""The SSE floor: the lean turn behind gunicorn and Flask beside the app's SSE turn (issue #23).

    flock /tmp/bench.lock .venv/bin/python bench/sse_floor.py [--streams 1 8 32] [--rounds 10] [--turns 8] [--store app-store]

The app's SSE turn costs more CPU than its WebSocket turn, the lean server's does not. This
tells how much of that is the HTTP stack (gunicorn's gevent worker, Flask's request handling)
and how much the app's own SSE code. Processes, as in chat_bench.py (none shares a GIL with
another): the fake Claude (bench_procs.py fake, 20 ms between events), the app as in production
(`python -m src.app`, `--workers` workers: one master, its workers accepting from one shared
listener, the memory process), three groups of lean servers, every group on its own port and
database: `pywsgi` (bench/lean_server.py, gevent.pywsgi, `--workers` processes sharing the port
with SO_REUSEPORT), `gunicorn` (bench/lean_gunicorn.py: the same `Lean` turn and SSE generator
behind a bare Flask route, gunicorn's arbiter and one stock gevent worker, `--workers` such
processes sharing the port with `reuse_port`) and `shared` (the same with one arbiter and
`--workers` workers accepting from its one listener, as the app's workers do), and the client
processes (bench_procs.py clients, one per worker, each owning every k-th stream with a socket
and a connection to the app and to each lean server). The lean servers take the app's system
prompt (its first request's, the persona's name replaced by each session's). With `--store
app-store` every lean group stores its turns with the app's own storage (bench/lean_store.py
`AppStore`, as bench/floor_store.py's second floor), so the `shared` group is the lean turn
on the app's HTTP stack and the app's storage at once: what is left of the app's SSE turn over
it is the app's own chat code.

Eight kinds of turn: lean WS and lean SSE (pywsgi), lean SSE on `gunicorn` and on `shared`, app
WS, app SSE, and the `shared` lean SSE and the app's SSE on a kept connection. Every other SSE
turn is a POST on a new connection (as in chat_bench.py); a kept one reuses the stream's last
connection (reconnecting before the clock starts only when the server closed it), so a
session's turns stay with one worker, as a WebSocket's do. One warm-up round of each
kind at the largest stream count, then at each stream count `--rounds` rounds of each kind,
interleaved (the order rotating round by round); a round is a burst of N streams started at one
wall-clock instant, each stream sending `ceil(--turns / N)` turns back to back (so a round at
one stream averages several turns). CPU per turn of a round: the run time
(`bench_procs.cpu_seconds`, nanoseconds) of the kind's group (the lean group's processes and
their children; the app's master and workers) from /proc over the round, divided by its turns,
plus an equal share of what the group ran outside its kinds' rounds in the setting (the app's
memory process, its titles and cortex updates, runs while later rounds do;
`chat_bench.share_background`; each setting starts and ends once the app is quiet,
`Bench.quiet`). Two tables: the
median over the rounds and the mean over them (all their CPU over all their turns; until the
ninth session /proc's 10 ms ticks made a round's figure coarse and the mean resolved finer), each with the app's
chat workers alone in brackets and the ratios; then the SSE cost taken apart, from the means.
About 4 minutes with the defaults (a turn lasts about 0.3 s: ten events 20 ms apart).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_procs import (  # noqa: E402
    Child,
    app_parts,
    cpu_seconds,
    free_port,
    serve_app,
    tree_pids,
)
from bench.chat_bench import LEAN, START_DELAY, Bench, pct, share_background  # noqa: E402

LEAN_GUNICORN = ROOT / "bench" / "lean_gunicorn.py"
LEANS = ["lean WS", "lean SSE pywsgi", "lean SSE gunicorn+Flask",
         "lean SSE gunicorn+Flask, shared listener"]
LEAN_KEPT = "lean SSE gunicorn+Flask, shared listener, kept connection"
APPS = ["app WS", "app SSE", "app SSE, kept connection"]
# kind -> (the client's name for the turn, the group whose CPU it spends)
KINDS = {"lean WS": ("lean", "pywsgi"), "lean SSE pywsgi": ("lean_sse", "pywsgi"),
         "lean SSE gunicorn+Flask": ("flask", "gunicorn"),
         "lean SSE gunicorn+Flask, shared listener": ("shared", "shared"),
         LEAN_KEPT: ("shared_kept", "shared"),
         "app WS": ("ws", "app"), "app SSE": ("sse", "app"),
         "app SSE, kept connection": ("sse_kept", "app")}


class Floor:
    """The running processes and the rounds on them."""

    def __init__(self, bench: Bench, groups: dict[str, list[Child]], app_pid: int):
        self.bench, self.groups, self.app_pid = bench, groups, app_pid

    def pids(self, group: str, in_rounds: bool = True) -> tuple[list[int], list[int]]:
        """The group's whole process tree (for the app `in_rounds`: without its memory process,
        whose background work `setting` shares out), and (the app only) its chat workers."""
        if group == "app":
            return self.bench.app_pids(in_rounds), app_parts(self.app_pid)["workers"]
        return [pid for child in self.groups[group] for pid in tree_pids(child.proc.pid)], []

    def round(self, kind: str, streams: int, turns: int) -> tuple[list[float], float, float]:
        """One burst of `kind`: the TTFTs, and the CPU per turn of its group and of the app's
        chat workers (0 for a lean group)."""
        name, group = KINDS[kind]
        pids, workers = self.pids(group)
        before, before_workers = cpu_seconds(pids), cpu_seconds(workers)
        at = time.time() + START_DELAY
        for client in self.bench.clients:
            client.send(json.dumps({"kind": name, "turns": turns, "at": at, "n": streams}))
        ttfts = [t for client in self.bench.clients for t in client.read()["ttfts"]]
        done = streams * turns
        return (ttfts, (cpu_seconds(pids) - before) / done,
                (cpu_seconds(workers) - before_workers) / done)

    def setting(self, streams: int, rounds: int, turns: int) -> dict[str, dict]:
        """Interleaved rounds of every kind at `streams`; per kind its per-round CPU per turn,
        the workers' (app kinds) and the TTFTs."""
        found: dict[str, dict] = {kind: {"cpu": [], "workers": [], "ttft": []} for kind in KINDS}
        order = list(KINDS)
        groups = sorted({group for _, group in KINDS.values()})
        self.bench.quiet()  # the warm-up's titles and the last setting's updates are done
        before = {group: cpu_seconds(self.pids(group, in_rounds=False)[0]) for group in groups}
        for i in range(rounds):
            shift = i % len(order)
            for kind in order[shift:] + order[:shift]:
                ttfts, cpu, workers = self.round(kind, streams, turns)
                found[kind]["ttft"] += ttfts
                found[kind]["cpu"].append(cpu)
                found[kind]["workers"].append(workers)
        self.bench.quiet()  # what these turns asked of the app in the background is theirs
        for group in groups:  # figures per turn: the group's whole CPU over a round's turns
            total = cpu_seconds(self.pids(group, in_rounds=False)[0]) - before[group]
            share_background(total / (streams * turns),
                             [found[kind]["cpu"] for kind, (_, of) in KINDS.items() if of == group])
        return found


def mean(values: list[float]) -> float:
    """The mean of equal-sized rounds' figures: their CPU over their turns (finer than a
    median of figures each noisy on its own)."""
    return statistics.fmean(values)


def cpu_row(streams: int, turns: int, found: dict[str, dict],
            of: Callable[[list[float]], float]) -> str:
    """One CPU table row: `of` (median or mean) of the per-round CPU per turn of each kind
    (the app's chat workers alone in brackets), the ratios and the TTFT p50/p95s."""
    cpu = {kind: of(found[kind]["cpu"]) * 1000 for kind in KINDS}
    workers = {kind: of(found[kind]["workers"]) * 1000 for kind in KINDS}
    cells = [f"{cpu[kind]:.2f}" for kind in [*LEANS, LEAN_KEPT]] + \
        [f"{cpu[kind]:.2f} ({workers[kind]:.2f})" for kind in APPS]
    ratios = [f"{cpu[app] / cpu[lean]:.2f} ({workers[app] / cpu[lean]:.2f})"
              for app, lean in (("app SSE", LEANS[1]), ("app SSE", LEANS[2]),
                                ("app SSE", LEANS[3]), ("app WS", LEANS[0]))]
    ttft = " / ".join(f"{pct(found[kind]['ttft'], 50):.0f}/{pct(found[kind]['ttft'], 95):.0f}"
                      for kind in KINDS)
    return f"| {streams} | {turns} | {' | '.join(cells + ratios)} | {ttft} |"


def parts_row(streams: int, found: dict[str, dict]) -> str:
    """Where the app's SSE cost goes, from the means."""
    cpu = {kind: mean(found[kind]["cpu"]) * 1000 for kind in KINDS}
    workers = mean(found["app SSE"]["workers"]) * 1000
    lean_ws, pywsgi, flask, shared = (cpu[kind] for kind in LEANS)
    app_ws, app_sse = cpu["app WS"], cpu["app SSE"]
    return (f"| {streams} | {app_sse - app_ws:+.2f} | {pywsgi - lean_ws:+.2f} | "
            f"{flask - pywsgi:+.2f} | {shared - flask:+.2f} | {app_sse - shared:+.2f} "
            f"({workers - shared:+.2f}) | {(app_sse - app_ws) - (shared - lean_ws):+.2f} |")


CPU_HEAD = ("| streams | turns per stream and round | lean WS | lean SSE pywsgi | "
            "lean SSE gunicorn+Flask | lean SSE gunicorn+Flask, shared listener | same, kept "
            "connection | app WS | "
            "app SSE | app SSE, kept connection | app SSE ÷ lean pywsgi | app SSE ÷ lean gunicorn+Flask | "
            "app SSE ÷ lean shared listener | app WS ÷ lean WS | TTFT p50/p95 ms, same order |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
PARTS_HEAD = ("| streams | app SSE − app WS | lean: pywsgi SSE − WS | "
              "gunicorn+Flask − pywsgi | shared listener − reuse_port | "
              "the app's own: app SSE − lean shared listener (workers) | "
              "(app SSE − app WS) − (lean shared listener − lean WS) |\n"
              "|---|---|---|---|---|---|---|")


def start_group(stack: ExitStack, script: Path, fake_url: str, data: str, processes: int,
                store: str, *extra: str) -> list[Child]:
    """`processes` lean processes of `script` with `store` (`extra`: more arguments) on one
    new port, with one database in `data`."""
    port, db = free_port(), str(Path(data) / f"{script.stem}{''.join(extra)}.db")
    group = [Child(str(port), fake_url, db, "anthropic", store, *extra, script=str(script))
             for _ in range(processes)]
    for child in group:
        stack.callback(child.close)
    return group


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--turns", type=int, default=8, help="turns per round, at least")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", choices=["plain", "app-store"], default="plain",
                        help="the lean groups' storage (bench/lean_store.py)")
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    load = os.getloadavg()[0]
    started, clock = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic()
    with ExitStack() as stack:
        fake = Child("fake", "0.02", "10", "anthropic")
        stack.callback(fake.close)
        url = fake.hello["url"]
        data = stack.enter_context(tempfile.TemporaryDirectory())
        base, proc = stack.enter_context(serve_app(url, data, args.workers))
        groups = {"pywsgi": start_group(stack, LEAN, url, data, args.workers, args.store),
                  "gunicorn": start_group(stack, LEAN_GUNICORN, url, data, args.workers,
                                          args.store),
                  "shared": start_group(stack, LEAN_GUNICORN, url, data, 1, args.store,
                                        str(args.workers))}
        clients = [Child("clients", base, str(i), str(args.workers),
                         groups["pywsgi"][0].hello["url"],
                         f"flask={groups['gunicorn'][0].hello['url']}",
                         f"shared={groups['shared'][0].hello['url']}",
                         f"shared_kept={groups['shared'][0].hello['url']}")
                   for i in range(args.workers)]
        for client in clients:
            stack.callback(client.close)
        bench = Bench(fake, [], [each for group in groups.values() for each in group], clients,
                      proc.pid)
        print(f"started in {time.monotonic() - clock:.0f} s", file=sys.stderr, flush=True)
        bench.ensure_slots(max(args.streams))  # the sessions, a warm-up turn, the template
        floor = Floor(bench, groups, proc.pid)
        for kind in KINDS:  # warm-up: every lean session's first turn, every stack's first
            floor.round(kind, max(args.streams), 1)
        print(f"warm at {time.monotonic() - clock:.0f} s", file=sys.stderr, flush=True)
        found = {}
        for n in args.streams:
            turns = math.ceil(args.turns / n)
            found[n] = (turns, floor.setting(n, args.rounds, turns))
            print(f"done: {n} streams at {time.monotonic() - clock:.0f} s", file=sys.stderr,
                  flush=True)
    print(f"`bench/sse_floor.py` {started}, {os.cpu_count()} cores, {args.workers} app workers "
          f"and {args.workers} processes per lean group, fake 20 ms between events, "
          f"{args.rounds} rounds per kind, interleaved, lean storage {args.store}; load average "
          f"{load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after\n")
    for title, of in (("median of the per-round figures", statistics.median),
                      ("mean over all rounds", mean)):
        print(f"CPU per turn, ms ({title}; the app's chat workers alone in brackets):\n")
        print(CPU_HEAD)
        print("\n".join(cpu_row(n, turns, got, of) for n, (turns, got) in found.items()))
        print()
    print("Where the app's SSE cost goes, ms per turn (from the means):\n")
    print(PARTS_HEAD)
    print("\n".join(parts_row(n, got) for n, (_, got) in found.items()))


if __name__ == "__main__":
    main()
