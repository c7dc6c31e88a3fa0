"""The chat bench: the app against the raw SDK and the lean server, from outside, in one run.

Processes (none shares a GIL with another): the fake upstream (`bench_procs.py fake`: FakeClaude,
or FakeOpenAI for `openai_compatible`, 20 ms between stream events, a listen backlog larger than
any burst), the app as in production (`python -m src.app`), the raw-SDK baseline (`bench_procs.py
sdk`, as many processes as the app has workers, each one warm client), the lean server
(`lean_server.py`, as many processes, one port: the same turn with nothing else), the clients
(`bench_procs.py clients`, as many processes as the SDK's, each owning every k-th stream, with a
socket to the app and one to the lean server) and this driver. For each provider, upstream
latency and stream count, rounds are interleaved, the order of SDK / lean WS / lean SSE / WS /
SSE rotating round by round. Each SSE turn, the app's and the lean server's alike, is a POST on
a new connection (a REST client's turn: TCP accept and HTTP parsing included), so the app's SSE
is measured against the lean server's SSE and its WS against the lean server's WS:
  burst  N streams started at one instant (a wall-clock deadline shared by all processes),
         each for ceil(8 / N) turns back to back (8 in a row at one stream: `ROUND_TURNS`);
  loop   N streams each sending `--loop-turns` turns back to back (a closed loop; off by default).
The SDK sends exactly the request bodies the app sent last for the same stream (same system
prompt and history), on warm connections, with the app's call. TTFT runs from sending to the
first text chunk. CPU per turn: the SDK processes' own over their rounds; the lean servers' and
the app's master and workers (run time from /proc, `bench_procs.cpu_seconds`) over theirs, plus
an equal share, per turn of either kind, of what the server ran outside them (the app's memory
process: its titles and cortex updates; anything either ran between its rounds), divided by the
turns (`share_background`). RSS of the app before the first burst and 3 s after
the last. Then (first provider only) the capacity phases (bench_capacity.py). One table at the end.

    flock /tmp/bench.lock .venv/bin/python bench/chat_bench.py      # the default, about 8 minutes
    ... --providers anthropic --streams 1 8 --rounds 2 --no-capacity  # a quick look
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_capacity import run_capacity  # noqa: E402
from bench.bench_clients import bodies_by_slot, system_text  # noqa: E402
from bench.bench_procs import (  # noqa: E402
    OPENAI,
    OPENAI_MODEL,
    Child,
    app_parts,
    cpu_seconds,
    free_port,
    memory_kib,
    serve_app,
    tree_pids,
)
from tests.support.worker_sockets import connections_per_worker  # noqa: E402

KINDS = ("sdk", "lean", "lean_sse", "ws", "sse")
# Turns a burst round runs at least, its streams' turns back to back (1 stream: 8 turns in a
# row): CPU came from /proc in 10 ms ticks then (now the threads' nanosecond run time), and
# one turn a round (6 turns in all) read a one-stream cell to about ±1.7 ms per turn, enough
# to swing its ratio from 0.9 to 1.8; more turns a round also average more turns' noise.
ROUND_TURNS = 8
# Interleaved rounds per setting. With six, one cell's CPU ratio moved by ±15 % between runs
# 20 minutes apart (docs/performance.md, tenth session); the table prints each ratio's
# standard error over the rounds, so a miss can be told from the noise.
ROUNDS = 10
LEAN_OF = {"ws": "lean", "sse": "lean_sse"}  # the lean turn each app turn is measured against
SETTLE = 3.0  # seconds of idleness after the bursts before RSS is read again
# A setting starts and ends once the app is quiet: under QUIET_CPU seconds of CPU in each of
# three QUIET_STEP intervals in a row (an idle app runs about 0.1 ms in one), at most QUIET_LIMIT.
QUIET_STEP, QUIET_CPU, QUIET_LIMIT = 0.5, 0.002, 60.0
LEAN = ROOT / "bench" / "lean_server.py"
START_DELAY = 0.1  # seconds from handing out a round to its start: every process is ready


class Bench:
    """One provider's run: the fake, the app, the SDK processes, the lean servers and the app's
    client processes (each also holding a socket to the lean server)."""

    def __init__(self, fake: Child, sdks: list[Child], leans: list[Child],
                 clients: list[Child], pid: int):
        self.fake, self.sdks, self.leans, self.clients, self.pid = fake, sdks, leans, clients, pid
        self.workers_cpu = 0.0  # the chat workers' CPU in the last WS or SSE round
        self.slots = 0
        self.bodies: dict[int, dict] = {}
        self.templated = False

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
        if not self.templated and 0 in self.bodies:
            self._template(self.bodies[0])

    def _template(self, body: dict) -> None:
        """The lean servers build their prompts from the app's system prompt (the persona's
        name replaced by each session's) with the same model and max_tokens."""
        system = body.get("system")
        if system is None:
            system = [{"type": "text", "text": system_text(body)}]
        template = {"system": system, "model": body["model"],
                    "max_tokens": body.get("max_tokens") or 2048, "name": "Bench 0"}
        for lean in self.leans:
            lean.ask(_json(template))
        self.templated = True

    def _refresh_bodies(self) -> None:
        answer = self.fake.ask("bodies")
        if answer["errors"]:
            raise RuntimeError(f"the fake failed: {answer['errors'][0]}")
        self.bodies.update(bodies_by_slot(answer["bodies"]))

    def round(self, kind: str, streams: int, turns: int) -> tuple[list[float], float]:
        """One round of `kind` on slots 0..streams-1; (TTFTs, CPU spent: the SDK processes'
        own for `sdk`, the lean servers' for `lean` and `lean_sse`, the app's master and workers
        for `ws` and `sse`: its memory process works in the background, `setting` shares it)."""
        at = time.time() + START_DELAY
        if kind == "sdk":
            return self._sdk_round(streams, turns, at)
        lean = kind.startswith("lean")
        pids = self.lean_pids() if lean else self.app_pids(in_rounds=True)
        workers = [] if lean else app_parts(self.pid)["workers"]
        cpu, cpu_workers = cpu_seconds(pids), cpu_seconds(workers)
        for client in self.clients:
            client.send(_json({"kind": kind, "turns": turns, "at": at, "n": streams}))
        ttfts = [t for client in self.clients for t in client.read()["ttfts"]]
        spent = cpu_seconds(pids) - cpu
        self.workers_cpu = cpu_seconds(workers) - cpu_workers
        if not lean:
            self._refresh_bodies()
        return ttfts, spent

    def quiet(self) -> None:
        """Waits until the app is quiet (`wait_quiet`)."""
        wait_quiet(self.app_pids)

    def app_pids(self, in_rounds: bool = False) -> list[int]:
        """The app's processes: all of them, or (`in_rounds`) the master and the workers."""
        memory = set(app_parts(self.pid)["memory"]) if in_rounds else set()
        return [pid for pid in tree_pids(self.pid) if pid not in memory]

    def lean_pids(self) -> list[int]:
        """The lean servers' processes."""
        return [each.proc.pid for each in self.leans]

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
        samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
        rounds_cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}
        workers = {"ws": 0.0, "sse": 0.0}
        self.quiet()
        memory = app_parts(self.pid)["memory"]
        memory_before = cpu_seconds(memory)
        totals_before = {"app": cpu_seconds(self.app_pids()), "lean": cpu_seconds(self.lean_pids())}
        for i in range(rounds):
            shift = i % len(KINDS)
            for kind in KINDS[shift:] + KINDS[:shift]:
                ttfts, spent = self.round(kind, streams, turns)
                samples[kind].extend(ttfts)
                rounds_cpu[kind].append(spent)
                if kind in workers:
                    workers[kind] += self.workers_cpu
        self.quiet()  # what these turns asked for in the background is theirs
        totals = {"app": cpu_seconds(self.app_pids()) - totals_before["app"],
                  "lean": cpu_seconds(self.lean_pids()) - totals_before["lean"]}
        for group, kinds in (("app", ("ws", "sse")), ("lean", ("lean", "lean_sse"))):
            share_background(totals[group], [rounds_cpu[kind] for kind in kinds])
        turns_each = rounds * streams * turns
        per_turn = {kind: sum(rounds_cpu[kind]) / turns_each for kind in KINDS}
        per_turn.update({f"workers_{kind}": workers[kind] / turns_each for kind in workers},
                        memory=(cpu_seconds(memory) - memory_before) / (2 * turns_each))
        spread = {kind: ratio_error(rounds_cpu[kind], rounds_cpu[LEAN_OF[kind]])
                  for kind in LEAN_OF}
        return {"samples": samples, "cpu": per_turn, "spread": spread}


def wait_quiet(pids: Callable[[], list[int]]) -> None:
    """Waits (up to `QUIET_LIMIT` seconds) until the processes `pids()` have run less than
    `QUIET_CPU` in each of three `QUIET_STEP` intervals in a row: what earlier turns asked of
    the app in the background (the warm-up sessions' titles, cortex updates, the idle trim) is
    done, so a setting counts the background work of its own turns and no one else's."""
    quiet_steps, last = 0, cpu_seconds(pids())
    deadline = time.monotonic() + QUIET_LIMIT
    while quiet_steps < 3 and time.monotonic() < deadline:
        time.sleep(QUIET_STEP)
        now = cpu_seconds(pids())
        quiet_steps = quiet_steps + 1 if now - last < QUIET_CPU else 0
        last = now


def share_background(total: float, rounds: list[list[float]]) -> None:
    """Adds to every round of a server's kinds an equal share of what the server ran outside
    them in the setting (`total` minus their rounds): the app's memory process (its titles and
    cortex updates, due after turns of either kind, run while the next rounds do: with the
    rotation, most of what WebSocket turns asked for ran in SSE rounds and what SSE turns
    asked for in the SDK's, where nobody counted it) and whatever either server ran between
    its rounds, so each of its turns carries the same part of it."""
    inside = sum(sum(kind) for kind in rounds)
    count = sum(len(kind) for kind in rounds)
    share = max(total - inside, 0.0) / count if count else 0.0
    for kind in rounds:
        kind[:] = [spent + share for spent in kind]


def ratio_error(app: list[float], lean: list[float], draws: int = 2000) -> float:
    """The standard error of sum(app) / sum(lean), by resampling the rounds (each app round
    with the lean round of the same rotation): one cell's ratio moves by about this much
    from run to run, so a bound missed by less than it is not yet a measured miss."""
    if len(app) < 2:
        return 0.0
    pick = random.Random(23)
    ratios = []
    for _ in range(draws):
        rounds = [pick.randrange(len(app)) for _ in app]
        ratios.append(sum(app[i] for i in rounds) / sum(lean[i] for i in rounds))
    return statistics.stdev(ratios)


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


def _ratio(p50: float, p95: float, base50: float, base95: float) -> str:
    return f"{p50 / base50:.2f}/{p95 / base95:.2f}"


def row_line(provider: str, latency: float, streams: int, mode: str, result: dict) -> str:
    """One row: TTFT p50/p95 of each kind, the app's ratios to the SDK and to the lean server,
    and the CPU per turn of each."""
    s, cpu = result["samples"], result["cpu"]
    p = {kind: (pct(s[kind], 50), pct(s[kind], 95)) for kind in KINDS}
    cells = [f"{p[kind][0]:.0f}/{p[kind][1]:.0f} ({_ratio(*p[kind], *p['sdk'])}; "
             f"{_ratio(*p[kind], *p[LEAN_OF[kind]])})" for kind in ("ws", "sse")]
    ratios = " / ".join(f"{cpu[kind] / cpu[LEAN_OF[kind]]:.2f} ±{result['spread'][kind]:.2f}"
                        for kind in ("ws", "sse"))
    return (f"| {provider} | {latency * 1000:.0f} ms | {streams} | {mode} | "
            f"{p['sdk'][0]:.0f}/{p['sdk'][1]:.0f} | {p['lean'][0]:.0f}/{p['lean'][1]:.0f} | "
            f"{p['lean_sse'][0]:.0f}/{p['lean_sse'][1]:.0f} | "
            f"{cells[0]} | {cells[1]} | {cpu['sdk'] * 1000:.1f} / {cpu['lean'] * 1000:.1f} / "
            f"{cpu['lean_sse'] * 1000:.1f} / {cpu['ws'] * 1000:.1f} / {cpu['sse'] * 1000:.1f} ms"
            f" | {cpu['workers_ws'] * 1000:.1f} / {cpu['workers_sse'] * 1000:.1f} / "
            f"{cpu['memory'] * 1000:.1f} ms | {ratios} |")


def table(runs: list[dict], capacity: dict | None, args) -> str:
    """The bench's one table (Markdown)."""
    lines = [f"`bench/chat_bench.py` {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{os.cpu_count()} cores, {args.workers} workers (and as many SDK, lean and client "
             f"processes), fake {args.event_delay * 1000:.0f} ms between events, "
             f"{args.rounds} rounds",
             "",
             "| provider | latency | streams | mode | raw SDK p50/p95 ms | lean WS p50/p95 ms | "
             "lean SSE p50/p95 ms | app WS p50/p95 (÷SDK; ÷lean WS) | "
             "app SSE p50/p95 (÷SDK; ÷lean SSE) | "
             "CPU per turn SDK / lean WS / lean SSE / WS / SSE | "
             "workers WS / SSE / memory process | app CPU ÷ lean (± standard error), WS / SSE |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        lines += [row_line(run["provider"], *row) for row in run["rows"]]
    lines.append("\nCPU per turn: the SDK processes' own (its HTTP stack, every event parsed), the "
                 "lean servers' (bench/lean_server.py) over their WS and their SSE rounds, "
                 "and the app's master and workers over its WS and SSE rounds, each server's "
                 "turns with an equal share of everything else it ran in the setting (the "
                 "app's memory process: titles and cortex updates; the work between rounds); "
                 "then the chat workers' alone (with their helpers) over the "
                 "WS and the SSE rounds, and the memory process's over the whole setting per "
                 "app turn (WS and SSE together). The ± after each CPU ratio is its standard "
                 "error over the rounds (resampled, each app round with the lean round of the "
                 "same rotation).")
    for run in runs:
        before, after = run["rss_before"], run["rss_after"]
        lines.append(f"{run['provider']}: RSS (VmRSS, master, workers and memory process) {before:.0f} MiB before "
                     f"the bursts, {after:.0f} MiB {SETTLE:.0f} s after them "
                     f"({after / before:.2f}×); peak (VmHWM) {run['peak']:.0f} MiB; "
                     f"the bench's connections per worker "
                     f"{' / '.join(str(n) for n in run['sockets'])} (a WebSocket stays with the "
                     f"worker that accepted it)")
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


def run_provider(provider: str, args, with_capacity: bool) -> tuple[dict, dict | None]:
    """Every setting for one provider (and the capacity phases if asked); the rows, RSS before
    and after the bursts, and the capacity results."""
    fake = Child("fake", str(args.event_delay), str(args.chunks), provider)
    url = fake.hello["url"]
    children = [fake]
    run: dict = {"provider": provider, "rows": []}
    capacity = None
    try:
        children += [Child("sdk", url, provider) for _ in range(args.workers)]
        sdks = children[1:]
        extra = {"PERSONA_PROVIDER": provider, "OPENAI_BASE_URL": url,
                 "PERSONA_MODEL": OPENAI_MODEL} if provider == OPENAI else {}
        with tempfile.TemporaryDirectory() as data_dir, \
                serve_app(url, data_dir, args.workers, extra) as (base, proc):
            port, lean_db = free_port(), os.path.join(data_dir, "lean.db")
            leans = [Child(str(port), url, lean_db, provider, script=str(LEAN))
                     for _ in range(args.workers)]
            children += leans
            clients = [Child("clients", base, str(i), str(args.workers), leans[0].hello["url"])
                       for i in range(args.workers)]
            children += clients
            bench = Bench(fake, sdks, leans, clients, proc.pid)
            bench.ensure_slots(max(args.streams))
            run["sockets"] = list(connections_per_worker(proc.pid,
                                                          int(base.rsplit(":", 1)[1])).values())
            run["rss_before"] = memory_kib(proc.pid, "VmRSS") / 1024
            for latency in args.latency:
                fake.ask(f"latency {latency}")
                for n in args.streams:
                    run["rows"].append((latency, n, "burst", bench.setting(
                        n, args.rounds, -(-ROUND_TURNS // n))))
                    print(f"done: {provider}, {latency} s, {n} streams, burst", file=sys.stderr,
                          flush=True)
                    if args.loop_turns > 1 and latency == 0 and n > 1:
                        run["rows"].append((latency, n, "loop", bench.setting(
                            n, max(2, args.rounds // 4), args.loop_turns)))
            run["peak"] = memory_kib(proc.pid) / 1024
            time.sleep(SETTLE)  # the bench's own pause: idle time the server may use to give memory back
            run["rss_after"] = memory_kib(proc.pid, "VmRSS") / 1024
            for client in clients:
                client.close()
            if with_capacity:
                fake.ask("latency 0")
                capacity = run_capacity(base, proc.pid, args.cap_idle, args.cap_streams,
                                        args.cap_turns, args.half_open)
    finally:
        for child in children:
            child.close()
    return run, capacity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", nargs="+", default=["anthropic", OPENAI],
                        choices=["anthropic", OPENAI])
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 8, 32, 50])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0],
                        help="seconds the fake waits before the first event")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="interleaved rounds per setting")
    parser.add_argument("--loop-turns", type=int, default=0,
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
    runs, capacity = [], None
    for i, provider in enumerate(args.providers):
        run, found = run_provider(provider, args, not args.no_capacity and i == 0)
        runs.append(run)
        capacity = capacity or found
    print(table(runs, capacity, args))


if __name__ == "__main__":
    main()
