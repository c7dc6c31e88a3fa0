"""Load: many concurrent WebSocket chats against the app under gunicorn, with a paced fake upstream.

The app runs as in production (`python -m src.app`: gunicorn, gthread) in a subprocess, with
its cortex worker on, pointed at a FakeClaude in this process that paces every SSE event
(default 20 ms between events, 30 text chunks per reply, so a reply streams for about 0.7 s).
Each chat has its own persona and session and one open WebSocket, and sends its turns one after
another (the next when `done` arrives); all chats start together. Titles and the cortex updates
the conversations trigger run as they would for real.

Reported: errors (any `error` event, missing `done`, or exception; target 0); time to first
chunk (send to first `chunk` frame; each chat's first turn, which opens connections, is not
counted) against the bare SDK streaming the same request from the same fake at the same
concurrency (before and after the load, after one warm-up stream each; target ratio of the
medians <= 1.10); server CPU (utime + stime of the gunicorn processes from /proc, during the
load) per streamed chunk and per turn; and the server's peak resident memory (VmHWM).

    .venv/bin/python bench/load.py [--chats 50] [--turns 20] [--event-delay 0.02] [--chunks 30]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anthropic  # noqa: E402  (the baseline is the bare SDK on purpose)
import websocket  # noqa: E402

from bench.ttft_server import KEY, _call, peak_rss_kib, sdk_ttft, serve  # noqa: E402
from src.utils.services.chat_titles import TITLE_MAX_TOKENS  # noqa: E402
from tests.fakes import claude as fake_claude  # noqa: E402
from tests.fakes.claude import FakeClaude, replies  # noqa: E402

WORDS = ("Thanks for telling me about the trip. The mountains in autumn sound wonderful, and I "
         "remember you wanted to see the lake at sunrise. Did the weather hold, and did you "
         "manage the long ridge walk you planned with your sister? I would love to hear more.")


def reply_chunks(n: int) -> list[str]:
    """The reply text cut into exactly `n` chunks of similar size."""
    bounds = [len(WORDS) * i // n for i in range(n + 1)]
    return [WORDS[a:b] for a, b in zip(bounds, bounds[1:])]


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` and its children processes (the gunicorn workers), in seconds."""
    total = 0
    for each in [pid, *_children(pid)]:
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


class Chat:
    """One browser: a persona, a session and an open WebSocket; runs its turns in order."""

    def __init__(self, base: str, index: int):
        persona = _call(base, "POST", "/api/personas", {"name": f"Load {index}"})
        self.session_id = _call(base, "POST", "/api/sessions",
                                {"persona_id": persona["id"]})["id"]
        self.ws = websocket.create_connection(base.replace("http", "ws") + "/ws/chat",
                                              timeout=120)
        self.ttfts: list[float] = []
        self.chunks = 0
        self.errors: list[str] = []

    def run(self, turns: int, start: threading.Barrier) -> None:
        """Sends `turns` messages, each after the previous reply is done."""
        start.wait()
        for n in range(turns):
            try:
                self._turn(f"Message {n}: how are you today?", measured=n > 0)
            except Exception as exc:  # counted, and the chat goes on with its next turn
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def _turn(self, message: str, measured: bool = True) -> None:
        sent, first = time.perf_counter(), None
        self.ws.send(json.dumps({"type": "chat", "session_id": self.session_id,
                                 "message": message}))
        while True:
            event = json.loads(self.ws.recv())
            if event["type"] == "chunk":
                self.chunks += 1
                if first is None:
                    first = time.perf_counter()
                    if measured:
                        self.ttfts.append(first - sent)
            elif event["type"] == "error":
                self.errors.append(f"error event: {event.get('code')}")
                return
            elif event["type"] == "done":
                if first is None:
                    self.errors.append("done without a chunk")
                return

    def close(self) -> None:
        """Closes the socket."""
        self.ws.close()


def sdk_baseline(fake, body: dict, streams: int, turns: int) -> list[float]:
    """TTFT of the bare SDK: `streams` concurrent streams of `body`, `turns` each."""
    with anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0,
                             timeout=120.0) as sdk, ThreadPoolExecutor(streams) as pool:
        start = threading.Barrier(streams)

        def stream_all(_):
            start.wait()
            sdk_ttft(sdk, body)  # warm-up: opens this stream's connection
            return [sdk_ttft(sdk, body) for _ in range(turns)]
        return [t for samples in pool.map(stream_all, range(streams)) for t in samples]


def upstream(chunks: list[str], delay: float):
    """Chat replies paced at `delay` per event; titles and cortex updates answered at once."""
    chat = replies.text("".join(chunks), chunks=chunks, event_delay=delay)

    def answer(body):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("A title")
        if body.get("tools"):
            return replies.text("Nothing new to remember.")
        return chat
    return replies.scripted(answer)


def last_chat_body(fake) -> dict:
    """The newest chat request as the fake received it (the SDK baseline sends exactly that)."""
    return next(r.body for r in reversed(fake.requests)
                if r.stream and not r.tools and r.body.get("max_tokens") != TITLE_MAX_TOKENS)


def run(args) -> dict:
    """Runs the baseline, the load and the baseline again; returns the figures."""
    fake_claude._Server.request_queue_size = 512
    os.environ["PERSONA_WORKERS"] = str(args.workers)
    with FakeClaude() as fake, tempfile.TemporaryDirectory() as data_dir:
        fake.default = upstream(reply_chunks(args.chunks), args.event_delay)
        with serve(fake.url, data_dir) as (base, proc):
            chats = [Chat(base, i) for i in range(args.chats)]
            chats[0]._turn("Warm-up")
            chats[0].chunks = 0
            body = last_chat_body(fake)
            sdk = sdk_baseline(fake, body, args.chats, args.baseline_turns)
            start = threading.Barrier(args.chats)
            threads = [threading.Thread(target=chat.run, args=(args.turns, start))
                       for chat in chats]
            cpu_before, began = cpu_seconds(proc.pid), time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed, cpu = time.perf_counter() - began, cpu_seconds(proc.pid) - cpu_before
            sdk += sdk_baseline(fake, body, args.chats, args.baseline_turns)
            peaks = peak_rss_kib(proc.pid)
            for chat in chats:
                chat.close()
        if fake.errors:
            raise fake.errors[0]
    ttfts = [t for chat in chats for t in chat.ttfts]
    chunks = sum(chat.chunks for chat in chats)
    errors = [e for chat in chats for e in chat.errors]
    return {"elapsed": elapsed, "turns": args.chats * args.turns, "chunks": chunks,
            "errors": errors, "ttft": ttfts, "sdk": sdk, "cpu": cpu, "peaks": peaks}


def _ms(values: list[float], percentile: int) -> float:
    if percentile == 50:
        return statistics.median(values) * 1000
    return statistics.quantiles(values, n=100)[percentile - 1] * 1000


def report(args, r: dict) -> None:
    """Prints the figures."""
    print(f"{args.chats} WebSocket chats x {args.turns} turns against the fake upstream "
          f"({args.chunks} chunks per reply, {args.event_delay * 1000:.0f} ms per event), "
          f"{args.workers} gunicorn worker(s); {r['elapsed']:.1f} s")
    print(f"errors: {len(r['errors'])} of {r['turns']} turns"
          + (f" (first: {r['errors'][0]})" if r["errors"] else ""))
    print(f"time to first chunk, ms: app p50 {_ms(r['ttft'], 50):.1f}, p95 {_ms(r['ttft'], 95):.1f}"
          f"; bare SDK p50 {_ms(r['sdk'], 50):.1f}, p95 {_ms(r['sdk'], 95):.1f}; "
          f"ratio of medians {statistics.median(r['ttft']) / statistics.median(r['sdk']):.3f} "
          "(target <= 1.10)")
    print(f"server CPU: {r['cpu']:.2f} s for {r['chunks']} chunks = "
          f"{r['cpu'] / max(r['chunks'], 1) * 1e6:.0f} us per chunk, "
          f"{r['cpu'] / r['turns'] * 1000:.1f} ms per turn")
    total = sum(r["peaks"].values())
    detail = ", ".join(f"pid {pid}: {kib / 1024:.1f} MiB" for pid, kib in r["peaks"].items())
    print(f"peak server RSS (VmHWM): {total / 1024:.1f} MiB ({detail})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=30, help="text chunks per reply")
    parser.add_argument("--event-delay", type=float, default=0.02,
                        help="seconds between the fake's SSE events")
    parser.add_argument("--baseline-turns", type=int, default=5,
                        help="SDK streams per chat slot, before and after the load")
    parser.add_argument("--workers", type=int, default=2, help="PERSONA_WORKERS (the app default)")
    args = parser.parse_args()
    result = run(args)
    report(args, result)
    sys.exit(1 if result["errors"] else 0)


if __name__ == "__main__":
    main()
