"""Time to first chunk through the app on each provider against that provider's bare SDK.

For `anthropic` and `openai_compatible` in turn, three processes: the paced fake upstream
(bench/provider_fake.py), the app under gunicorn (`python -m src.app`, 2 workers) pointed at it,
and the bare SDK baseline (bench/provider_baseline.py: `anthropic` or `openai`, sending exactly
the request the app last sent). Rounds interleave: N chats on `/ws/chat` started together, then
N SDK streams started together (the order flips every round). TTFT is from sending to the first
text chunk; p50 and p95 over all streams of all rounds; ratio = app / SDK.

    flock /tmp/bench.lock .venv/bin/python bench/ttft_providers.py [--runs 20] [--streams 1 32]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_clients import Slot  # noqa: E402
from bench.bench_procs import serve_app  # noqa: E402

PROVIDERS = ("anthropic", "openai_compatible")
OPENAI_MODEL = "llama3.2:3b"


@contextmanager
def helper(*args: str):
    """A helper process talking line by line over stdin/stdout."""
    with subprocess.Popen([sys.executable, *args], cwd=ROOT, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as proc:
        try:
            yield proc
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)


def ask(proc, line: str) -> str:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


@contextmanager
def app(provider: str, fake_url: str, data_dir: str):
    """The app under gunicorn (2 workers) for `provider`; yields its base URL."""
    extra = {}
    if provider == "openai_compatible":
        extra = {"PERSONA_PROVIDER": provider, "OPENAI_BASE_URL": fake_url,
                 "PERSONA_MODEL": OPENAI_MODEL}
    with serve_app(fake_url, data_dir, 2, extra) as (base, _proc):
        yield base


def measure(provider: str, delay: float, streams: list[int], runs: int) -> dict:
    """{streams: {"app": [...], "sdk": [...]}} in seconds."""
    results = {}
    with helper("bench/provider_fake.py", provider, str(delay)) as fake, \
            tempfile.TemporaryDirectory() as data_dir:
        url = fake.stdout.readline().strip()
        with app(provider, url, data_dir) as base, \
                helper("bench/provider_baseline.py", provider, url) as baseline:
            body_path = os.path.join(data_dir, "body.json")
            for count in streams:
                results[count] = rounds(base, fake, baseline, body_path, count, runs)
    return results


def rounds(base, fake, baseline, body_path: str, count: int, runs: int) -> dict:
    slots = [Slot(base, f"{count}-{i}") for i in range(count)]
    samples = {"app": [], "sdk": []}
    try:
        with ThreadPoolExecutor(count) as pool:
            def app_round() -> list[float]:
                return list(pool.map(lambda slot: slot.turn("ws"), slots))

            app_round()  # warm-up: opens connections, creates the cortex files
            ask(fake, f"dump {body_path}")
            json.loads(ask(baseline, f"{count} {body_path}"))
            for i in range(runs):
                kinds = ("app", "sdk") if i % 2 == 0 else ("sdk", "app")
                for kind in kinds:
                    if kind == "app":
                        samples["app"] += app_round()
                    else:
                        ask(fake, f"dump {body_path}")
                        samples["sdk"] += json.loads(ask(baseline, f"{count} {body_path}"))
    finally:
        for slot in slots:
            slot.close()
    return samples


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else values[0] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--event-delay", type=float, default=0.004)
    parser.add_argument("--providers", nargs="+", default=list(PROVIDERS))
    args = parser.parse_args()
    print(f"{args.runs} interleaved rounds; fake: {args.event_delay * 1000:.1f} ms between "
          "events; time to first chunk in ms (target: ratio of p50 <= 1.05 at 1 stream, "
          "<= 1.10 at 32)")
    print("| provider | streams | app p50 / p95 | SDK p50 / p95 | ratio p50 (p95) |")
    print("| --- | --- | --- | --- | --- |")
    for provider in args.providers:
        for count, samples in measure(provider, args.event_delay, args.streams,
                                      args.runs).items():
            a50, a95 = pct(samples["app"], 50), pct(samples["app"], 95)
            s50, s95 = pct(samples["sdk"], 50), pct(samples["sdk"], 95)
            print(f"| {provider} | {count} | {a50:.1f} / {a95:.1f} | {s50:.1f} / {s95:.1f} | "
                  f"{a50 / s50:.2f} ({a95 / s95:.2f}) |", flush=True)


if __name__ == "__main__":
    main()
