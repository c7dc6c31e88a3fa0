"""Time to first chunk through `ApiClient.stream()` versus straight from the SDK.

Both read the same FakeClaude stream (a few milliseconds between events, as the API paces its
first events), interleaved run by run with alternating order so neither side gets a warmer
connection or CPU. Prints both medians and their ratio; the target is a ratio of at most 1.05.

    .venv/bin/python bench/ttft_client.py [--runs 40] [--event-delay 0.004]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anthropic  # noqa: E402  (the bench compares against the bare SDK on purpose)

from src.utils.api_request import ApiClient, RequestConfig  # noqa: E402
from tests.fakes.claude import FakeClaude, replies  # noqa: E402

KEY = "sk-ant-bench-0000000000000000"
MODEL = "claude-sonnet-5-5"
TEXT = "Hello! It is good to see you again. How was the trip to the mountains last weekend?"
CONFIG = RequestConfig(system_prompt="You are Mia, a warm and curious companion.",
                       messages=[{"role": "user", "content": "Hi Mia!"}], max_tokens=300)


def ttft_api_client(client: ApiClient) -> float:
    """Seconds from calling stream() to the first `chunk`; the rest is read to the end."""
    start, first = time.perf_counter(), None
    for event in client.stream(CONFIG):
        if first is None and event.event_type == "chunk":
            first = time.perf_counter()
    if first is None or event.event_type != "done":
        raise RuntimeError(f"ApiClient stream failed: {event}")
    return first - start


def ttft_sdk(sdk: anthropic.Anthropic) -> float:
    """Seconds from messages.stream() to its first text delta; the rest is read to the end."""
    start, first = time.perf_counter(), None
    with sdk.messages.stream(model=MODEL, max_tokens=CONFIG.max_tokens, system=CONFIG.system_prompt,
                             messages=CONFIG.messages) as stream:
        for _ in stream.text_stream:
            if first is None:
                first = time.perf_counter()
    if first is None:
        raise RuntimeError("SDK stream produced no text")
    return first - start


def run(runs: int, event_delay: float, warmup: int = 3) -> tuple[float, float]:
    """Median TTFT (ApiClient, SDK) over `runs` interleaved pairs, after a few warm-up pairs."""
    with FakeClaude() as fake, ApiClient(api_key=KEY, base_url=fake.url, max_retries=0,
                                         default_model=MODEL) as client, \
            anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0, timeout=60.0) as sdk:
        fake.default = replies.text(TEXT, event_delay=event_delay)
        ours, theirs = [], []
        for i in range(warmup + runs):
            if i % 2 == 0:
                mine = ttft_api_client(client)
                sdk_only = ttft_sdk(sdk)
            else:
                sdk_only = ttft_sdk(sdk)
                mine = ttft_api_client(client)
            if i >= warmup:
                ours.append(mine)
                theirs.append(sdk_only)
        if fake.errors:
            raise fake.errors[0]
    return statistics.median(ours), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="interleaved pairs (at least 20)")
    parser.add_argument("--event-delay", type=float, default=0.004,
                        help="seconds between SSE events from the fake")
    args = parser.parse_args()
    ours, theirs = run(max(20, args.runs), args.event_delay)
    print(f"runs: {max(20, args.runs)} pairs, event_delay {args.event_delay * 1000:.1f} ms")
    print(f"ApiClient.stream() first chunk: median {ours * 1000:.2f} ms")
    print(f"SDK messages.stream() first text delta: median {theirs * 1000:.2f} ms")
    print(f"ratio: {ours / theirs:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
