"""A/B of the app's CPU per chat turn: two source trees served side by side, bursts interleaved.

    .venv/bin/python bench/ab_cpu.py --a HEAD~1 --b HEAD [--streams 8 32] [--rounds 6] [--mode sse]

Each of `--a` and `--b` is a git revision (exported with `git archive` into a temporary
directory) or `.` (this working tree). One fake Claude (bench_procs.py fake, 20 ms between
events) serves both apps (`python -m src.app`, 2 workers each, own data directories); each app
has its own client processes. Rounds alternate A and B (the order flipping every round) at each
stream count; CPU is utime + stime of each app's whole process tree from /proc over its own
rounds, divided by its turns. `--mode` picks the transport the turns use: the WebSocket (`ws`, the
default) or `POST /api/chat/stream` (`sse`). Load on the machine slows both alike, so the ratio B/A is what to
read; absolute figures need a quiet machine.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_procs import OPENAI, OPENAI_MODEL, Child, serve_app  # noqa: E402
from bench.chat_bench import Bench  # noqa: E402


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
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--provider", default="anthropic", choices=["anthropic", OPENAI])
    parser.add_argument("--mode", default="ws", choices=["ws", "sse"])
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    with ExitStack() as stack:
        fake = Child("fake", "0.02", "10", args.provider)
        stack.callback(fake.close)
        url = fake.hello["url"]
        extra = {"PERSONA_PROVIDER": args.provider, "OPENAI_BASE_URL": url,
                 "PERSONA_MODEL": OPENAI_MODEL} if args.provider == OPENAI else {}
        benches = {}
        for name, revision in (("A", args.a), ("B", args.b)):
            tree = export(revision, stack.enter_context(tempfile.TemporaryDirectory()))
            data = stack.enter_context(tempfile.TemporaryDirectory())
            base, proc = stack.enter_context(serve_app(url, data, args.workers, extra, tree))
            clients = [Child("clients", base, str(i), str(args.workers))
                       for i in range(args.workers)]
            for client in clients:
                stack.callback(client.close)
            benches[name] = Bench(fake, [], [], clients, proc.pid)
            benches[name].ensure_slots(max(args.streams))
        print(f"A = {args.a}, B = {args.b}, {args.provider}, {args.mode}, {args.rounds} rounds each")
        print("| streams | CPU per turn A | CPU per turn B | B ÷ A | TTFT p50 A / B |")
        print("|---|---|---|---|---|")
        for n in args.streams:
            cpu = {"A": 0.0, "B": 0.0}
            ttfts: dict[str, list[float]] = {"A": [], "B": []}
            for i in range(args.rounds):
                for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
                    got, spent = benches[name].round(args.mode, n, 1)
                    ttfts[name] += got
                    cpu[name] += spent
            a, b = (cpu[k] / (args.rounds * n) * 1000 for k in ("A", "B"))
            print(f"| {n} | {a:.2f} ms | {b:.2f} ms | {b / a:.2f} | "
                  f"{statistics.median(ttfts['A']) * 1000:.0f} / "
                  f"{statistics.median(ttfts['B']) * 1000:.0f} ms |", flush=True)


if __name__ == "__main__":
    main()
