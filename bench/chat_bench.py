"""The chat bench: the app against the raw SDK, measured from outside, side by side in one run.

Processes (none shares a GIL with another): the fake Claude (`bench_procs.py fake`, 20 ms between
stream events), the app as in production (`python -m src.app`), the raw-SDK baseline
(`bench_procs.py sdk`, as many processes as the app has workers, each one warm client), the
app's WebSocket and SSE clients (`bench_procs.py clients`, as many processes as the SDK's, each
owning every k-th stream) and this driver. For each upstream latency and stream count, rounds
are interleaved, the order of SDK / WS / SSE rotating round by round:
  burst  N streams started at one instant (a wall-clock deadline shared by all processes);
  loop   N streams each sending `--loop-turns` turns back to back (a closed loop).
The SDK sends exactly the request bodies the app sent last for the same stream (same system
prompt and history), on warm connections, with `messages.create(stream=True)`, the app's call.
TTFT runs from sending to the first text chunk. Worker CPU is utime+stime of the gunicorn
workers (/proc) over the app's rounds, divided by its turns (titles and cortex updates the
turns trigger included); the SDK's is its processes' own CPU over its rounds. Then the
capacity phases (bench_capacity.py). One table at the end.

    flock /tmp/bench.lock .venv/bin/python bench/chat_bench.py      # the default, ~8 minutes
    ... --streams 1 8 --latency 0 --rounds 4 --no-capacity          # a quick look
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_capacity import run_capacity  # noqa: E402
from bench.bench_clients import bodies_by_slot  # noqa: E402
from bench.bench_procs import Child, cpu_seconds, memory_kib, serve_app, worker_pids  # noqa: E402

KINDS = ("sdk", "ws", "sse")
START_DELAY = 0.1  # seconds from handing out a round to its start: every process is ready


class Bench:
    """One run: the fake, the app, the SDK processes and the app's client processes."""

    def __init__(self, fake: Child, sdks: list[Child], clients: list[Child], pid: int):
        self.fake, self.sdks, self.clients, self.pid = fake, sdks, clients, pid
        self.slots = 0
        self.bodies: dict[int, dict] = {}

    def ensure_slots(self, n: int) -> None:
        """Slots 0..n-1 exist (created on demand by the client processes, one warm-up turn
        each), and the newest request body of each is known."""
        if n > self.slots:
            for client in self.clients:
                client.send(_json({"grow": n}))
            for client in self.clients:
                client.read()
            self.slots = n
        self._refresh_bodies()

    def _refresh_bodies(self) -> None:
        answer = self.fake.ask("bodies")
        if answer["errors"]:
            raise RuntimeError(f"the fake failed: {answer['errors'][0]}")
        self.bodies.update(bodies_by_slot(answer["bodies"]))

    def round(self, kind: str, streams: int, turns: int) -> tuple[list[float], float]:
        """One round of `kind` on slots 0..streams-1; (TTFTs, CPU spent: the SDK processes'
        own for `sdk`, the app's workers' for `ws` and `sse`)."""
        at = time.time() + START_DELAY
        if kind == "sdk":
            return self._sdk_round(streams, turns, at)
        workers = worker_pids(self.pid)
        cpu = cpu_seconds(workers)
        for client in self.clients:
            client.send(_json({"kind": kind, "turns": turns, "at": at, "n": streams}))
        ttfts = [t for client in self.clients for t in client.read()["ttfts"]]
        spent = cpu_seconds(workers) - cpu
        self._refresh_bodies()
        return ttfts, spent

    def _sdk_round(self, streams: int, turns: int, at: float) -> tuple[list[float], float]:
        """The baseline's TTFTs and the CPU its processes spent on them."""
        bodies = [self.bodies[i] for i in range(streams)]
        share = [bodies[i::len(self.sdks)] for i in range(len(self.sdks))]
        busy = [(sdk, part) for sdk, part in zip(self.sdks, share, strict=True) if part]
        for sdk, part in busy:
            sdk.send(_json({"bodies": part, "turns": turns, "at": at}))
        answers = [sdk.read() for sdk, _ in busy]
        return [t for a in answers for t in a["ttfts"]], sum(a["cpu"] for a in answers)

    def setting(self, streams: int, rounds: int, turns: int) -> dict:
        """Interleaved rounds at one stream count; samples and CPU per kind."""
        self.ensure_slots(streams)
        samples = {kind: [] for kind in KINDS}
        cpu = dict.fromkeys(KINDS, 0.0)
        for i in range(rounds):
            for kind in KINDS[i % 3:] + KINDS[:i % 3]:
                ttfts, spent = self.round(kind, streams, turns)
                samples[kind].extend(ttfts)
                cpu[kind] += spent
        per_turn = {kind: cpu[kind] / (rounds * streams * turns) for kind in KINDS}
        return {"samples": samples, "cpu": per_turn}


def _json(value) -> str:
    import json
    return json.dumps(value)


def pct(values: list[float], p: int) -> float:
    """The p-th percentile in ms."""
    if len(values) == 1:
        return values[0] * 1000
    if p == 50:
        return statistics.median(values) * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] * 1000


def table(rows: list[tuple], capacity: dict | None, args, peak_mib: float) -> str:
    """The bench's one table (Markdown)."""
    lines = [f"`bench/chat_bench.py` {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{os.cpu_count()} cores, {args.workers} workers, fake {args.event_delay * 1000:.0f} ms "
             f"between events, {args.rounds} rounds",
             "",
             "| latency | streams | mode | raw SDK p50/p95 ms | app WS p50/p95 (ratio) | "
             "app SSE p50/p95 (ratio) | CPU per turn SDK / WS / SSE |",
             "|---|---|---|---|---|---|---|"]
    for latency, streams, mode, result in rows:
        s = result["samples"]
        sdk50, sdk95 = pct(s["sdk"], 50), pct(s["sdk"], 95)
        cells = []
        for kind in ("ws", "sse"):
            p50, p95 = pct(s[kind], 50), pct(s[kind], 95)
            cells.append(f"{p50:.0f}/{p95:.0f} ({p50 / sdk50:.2f}/{p95 / sdk95:.2f})")
        cpu = result["cpu"]
        lines.append(f"| {latency * 1000:.0f} ms | {streams} | {mode} | {sdk50:.0f}/{sdk95:.0f} | "
                     f"{cells[0]} | {cells[1]} | {cpu['sdk'] * 1000:.1f} / "
                     f"{cpu['ws'] * 1000:.1f} / {cpu['sse'] * 1000:.1f} ms |")
    lines.append("\nCPU per turn: the SDK processes' own (its HTTP stack, every event parsed), "
                 "and the app's workers' (titles and cortex updates included).")
    lines.append(f"Peak RSS after the latency runs (VmHWM, master + workers): {peak_mib:.0f} MiB")
    if capacity:
        o, a, b, h = (capacity[k] for k in ("open", "streams", "idle", "half_open"))
        lines += [
            "",
            f"{o['open']} open idle WebSockets: RSS {o['rss_mib']:.0f} MiB, PSS "
            f"{o['pss_mib']:.0f} MiB (master + workers; PSS counts shared pages once)",
            "",
            "| capacity | open WebSockets | turns ok / errors | REST p95 (errors) | "
            "peak RSS / PSS |",
            "|---|---|---|---|---|",
            f"| {args.cap_streams} streaming | {a['open']} | {a['ok']} / {a['errors']} | "
            f"{a['rest_p95']:.0f} ms ({a['rest_errors']}) | {a['rss_mib']:.0f} / "
            f"{a['pss_mib']:.0f} MiB |",
            f"| {args.cap_streams} streaming + idle up to {args.cap_idle} | {b['open']} | "
            f"{b['ok']} / {b['errors']} | {b['rest_p95']:.0f} ms ({b['rest_errors']}) | "
            f"{b['rss_mib']:.0f} / {b['pss_mib']:.0f} MiB |",
            "",
            f"{h['held']} half-open connections from 127.0.0.1: /healthz from 127.0.0.2 "
            f"{'answered' if h['answered'] else 'NOT answered'} in {h['seconds'] * 1000:.0f} ms"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 8, 32, 50, 100])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.3],
                        help="seconds the fake waits before the first event")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds per setting")
    parser.add_argument("--loop-turns", type=int, default=3,
                        help="turns per stream in a closed-loop round (0: no loops)")
    parser.add_argument("--event-delay", type=float, default=0.02)
    parser.add_argument("--chunks", type=int, default=10, help="text chunks per reply")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("PERSONA_WORKERS", 2)))
    parser.add_argument("--no-capacity", action="store_true")
    parser.add_argument("--cap-idle", type=int, default=1000)
    parser.add_argument("--cap-streams", type=int, default=200)
    parser.add_argument("--cap-turns", type=int, default=2)
    parser.add_argument("--half-open", type=int, default=500)
    args = parser.parse_args()
    threading.stack_size(512 * 1024)
    fake = Child("fake", str(args.event_delay), str(args.chunks))
    sdks = [Child("sdk", fake.hello["url"]) for _ in range(args.workers)]
    rows, capacity = [], None
    children = [fake, *sdks]
    try:
        with tempfile.TemporaryDirectory() as data_dir, \
                serve_app(fake.hello["url"], data_dir, args.workers) as (base, proc):
            clients = [Child("clients", base, str(i), str(args.workers))
                       for i in range(args.workers)]
            children += clients
            bench = Bench(fake, sdks, clients, proc.pid)
            for latency in args.latency:
                fake.ask(f"latency {latency}")
                for n in args.streams:
                    rows.append((latency, n, "burst", bench.setting(n, args.rounds, 1)))
                    print(f"done: {latency} s, {n} streams, burst", file=sys.stderr, flush=True)
                    if args.loop_turns > 1 and latency == 0 and n > 1:
                        rows.append((latency, n, "loop", bench.setting(
                            n, max(2, args.rounds // 4), args.loop_turns)))
            peak = memory_kib(proc.pid) / 1024
            for client in clients:
                client.close()
            if not args.no_capacity:
                fake.ask("latency 0")
                capacity = run_capacity(base, proc.pid, args.cap_idle, args.cap_streams,
                                        args.cap_turns, args.half_open)
    finally:
        for child in children:
            child.close()
    print(table(rows, capacity, args, peak))


if __name__ == "__main__":
    main()
