"""A/B of the app's CPU per chat turn: two source trees served side by side, bursts interleaved.

    .venv/bin/python bench/ab_cpu.py --a HEAD~1 --b HEAD [--streams 8 32] [--rounds 6] [--runs 4] [--mode sse]

Each of `--a` and `--b` is a git revision (exported with `git archive` into a temporary
directory) or `.` (this working tree). One fake Claude (bench_procs.py fake, 20 ms between
events) serves both apps (`python -m src.app`, 2 workers each, own data directories); each app
has its own client processes. Rounds alternate A and B (the order flipping every round) at each
stream count, each stream sending ceil(8 / N) turns a round (chat_bench.py's `ROUND_TURNS`);
CPU is the run time of each app's whole process tree (`bench_procs.cpu_seconds`: the threads'
schedstat, in nanoseconds) over all rounds at that stream count, its own and the other's (what
its turns ask of its memory process runs while later rounds do; until the eleventh session only
its own rounds counted, which missed what ran in the other app's), divided by its turns, beside
its chat workers' alone (their own rounds) and its memory process's (src/memory_process.py, over
all rounds at that stream count, per turn of the app).
`--a-env`/`--b-env NAME=VALUE` set environment variables of one app (e.g. the same tree with
`PERSONA_MEMORY_PROCESS=0`). `--context-limit N` sets both apps' context limit, and with it how
often a persona's cortex update is due (every 0.75 × N messages): with a small N and the fake's
updates editing memory (BENCH_UPDATE_EDITS=1), turns coincide with updates. `--mode` picks the transport the turns use: the WebSocket
(`ws`, the default) or `POST /api/chat/stream` (`sse`). Load on the machine slows both
alike, so the ratio B/A is what to
read; absolute figures need a quiet machine. One run of two app instances moves by about ±5 %
(A/A runs, ninth session: an instance's own speed), so `--runs K` repeats it with fresh
apps, starting B first in every other run, and prints the geometric mean of B/A and its range.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_clients import call  # noqa: E402
from bench.bench_procs import (  # noqa: E402
    OPENAI,
    OPENAI_MODEL,
    Child,
    app_parts,
    cpu_seconds,
    serve_app,
)
from bench.chat_bench import ROUND_TURNS, Bench  # noqa: E402


def export(revision: str, into: str) -> Path:
    """The source tree of `revision` (`.`: this working tree, as it is)."""
    if revision == ".":
        return ROOT
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return Path(into)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True)
    parser.add_argument("--b", required=True)
    parser.add_argument("--streams", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=1,
                        help="fresh apps per run, started B first in every other run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--provider", default="anthropic", choices=["anthropic", OPENAI])
    parser.add_argument("--context-limit", type=int, default=None)
    parser.add_argument("--a-env", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--b-env", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--mode", default="ws", choices=["ws", "sse"])
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    print(f"A = {args.a} {' '.join(args.a_env)}, B = {args.b} {' '.join(args.b_env)}, "
          f"{args.provider}, {args.mode}, {args.rounds} rounds each, {args.runs} run(s), "
          f"context limit {args.context_limit or 'default'}, update edits "
          f"{os.environ.get('BENCH_UPDATE_EDITS', '0')}")
    print("| run | streams | CPU per turn A | CPU per turn B | B ÷ A | workers A / B | "
          "memory process A / B | TTFT p50 A / B |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[int, list[float]] = {n: [] for n in args.streams}
    for run in range(args.runs):
        for n, ratio in _run(args, run).items():
            ratios[n].append(ratio)
    if args.runs > 1:
        print("\n| streams | B ÷ A, geometric mean of the runs | lowest – highest |\n|---|---|---|")
        for n, found in ratios.items():
            mean = statistics.geometric_mean(found)
            print(f"| {n} | {mean:.3f} | {min(found):.2f} – {max(found):.2f} |")


def _run(args: argparse.Namespace, run: int) -> dict[int, float]:
    """One run: a fake and both apps started afresh (B first in odd runs: A/A runs moved by a
    few per cent from one pair of instances to the next), then the interleaved rounds at each
    stream count; B ÷ A by stream count."""
    with ExitStack() as stack:
        fake = Child("fake", "0.02", "10", args.provider)
        stack.callback(fake.close)
        url = fake.hello["url"]
        extra = {"PERSONA_PROVIDER": args.provider, "OPENAI_BASE_URL": url,
                 "PERSONA_MODEL": OPENAI_MODEL} if args.provider == OPENAI else {}
        sides = [("A", args.a, args.a_env), ("B", args.b, args.b_env)]
        benches = {}
        for name, revision, env in sides[::-1] if run % 2 else sides:
            tree = export(revision, stack.enter_context(tempfile.TemporaryDirectory()))
            data = stack.enter_context(tempfile.TemporaryDirectory())
            own = {**extra, **dict(item.split("=", 1) for item in env)}
            base, proc = stack.enter_context(serve_app(url, data, args.workers, own, tree))
            if args.context_limit:
                call(base, "PUT", "/api/settings", {"context_limit": args.context_limit})
            clients = [Child("clients", base, str(i), str(args.workers))
                       for i in range(args.workers)]
            for client in clients:
                stack.callback(client.close)
            benches[name] = Bench(fake, [], [], clients, proc.pid)
            benches[name].ensure_slots(max(args.streams))
        return {n: _compare(benches, n, args.rounds, args.mode, run + 1) for n in args.streams}


def _compare(benches: dict, n: int, rounds: int, mode: str, run: int) -> float:
    """Interleaved rounds of A and B at `n` streams; prints one table row, returns B ÷ A."""
    workers = {"A": 0.0, "B": 0.0}
    for bench in benches.values():  # the warm-up sessions' titles and earlier updates are done
        bench.quiet()
    memory = {name: app_parts(bench.pid)["memory"] for name, bench in benches.items()}
    memory_before = {name: cpu_seconds(pids) for name, pids in memory.items()}
    whole_before = {name: cpu_seconds(bench.app_pids()) for name, bench in benches.items()}
    ttfts: dict[str, list[float]] = {"A": [], "B": []}
    turns_each = -(-ROUND_TURNS // n)  # as chat_bench.py
    for i in range(rounds):
        for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
            got, _ = benches[name].round(mode, n, turns_each)
            ttfts[name] += got
            workers[name] += benches[name].workers_cpu
    turns = rounds * n * turns_each
    for bench in benches.values():
        bench.quiet()
    # Each app's turns carry all it ran in the setting: what a turn asks of the memory process
    # (titles, cortex updates) runs while later rounds do, the other app's among them, and
    # until the app is quiet again.
    cpu = {name: cpu_seconds(bench.app_pids()) - whole_before[name]
           for name, bench in benches.items()}

    def ms(values: dict, name: str) -> float:
        return values[name] / turns * 1000

    mem = {name: cpu_seconds(pids) - memory_before[name] for name, pids in memory.items()}
    a, b = ms(cpu, "A"), ms(cpu, "B")
    print(f"| {run} | {n} | {a:.2f} ms | {b:.2f} ms | {b / a:.2f} | {ms(workers, 'A'):.2f} / "
          f"{ms(workers, 'B'):.2f} ms | {ms(mem, 'A'):.2f} / {ms(mem, 'B'):.2f} ms | "
          f"{statistics.median(ttfts['A']) * 1000:.0f} / "
          f"{statistics.median(ttfts['B']) * 1000:.0f} ms |", flush=True)
    return b / a


if __name__ == "__main__":
    main()
