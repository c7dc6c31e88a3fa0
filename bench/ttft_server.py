"""Time to first chunk through our chat endpoints versus straight from the SDK, and server memory.

The app runs as in production (`python -m src.app`: gunicorn, gthread) in a subprocess, pointed
at a FakeClaude in this process. Each round starts N streams at once (behind a barrier) for each
of three kinds, the order rotating round by round:
  sdk  the bare SDK (`messages.create(stream=True)`, the call our server makes) sending exactly
       the request our server last sent for that stream (same system prompt and history), so
       the fake does the same work;
  ws   a chat frame on `/ws/chat` (one socket per stream, kept open as a browser does);
  sse  `POST /api/chat/stream` (connected before the clock starts, as the SDK's pool is).
TTFT runs from sending the request to the first text chunk. Each stream has its own persona and
session, so the server does everything a real turn does: stores the message, reads the cortex,
builds the prompt, streams, stores the reply, runs the cortex trigger (and its worker runs the
updates that queues). Peak RSS is VmHWM of the server processes after all runs.

    .venv/bin/python bench/ttft_server.py [--runs 20] [--streams 1 32] [--event-delay 0.004]
                                          [--first-token-delay 0]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anthropic  # noqa: E402  (the baseline is the bare SDK on purpose)
import websocket  # noqa: E402

from tests.fakes.claude import FakeClaude, replies  # noqa: E402

KEY = "sk-ant-bench-0000000000000000"
MODEL = "claude-sonnet-5-5"
TEXT = "Hello! It is good to see you again. How was the trip to the mountains last weekend?"
KINDS = ("sdk", "ws", "sse")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(base: str, method: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@contextmanager
def serve(fake_url: str, data_dir: str):
    """The app under gunicorn in a subprocess; yields (base_url, process)."""
    port = _free_port()
    env = {**os.environ, "PERSONA_DATA_DIR": data_dir, "PERSONA_PORT": str(port),
           "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_url,
           "PERSONA_LOG_LEVEL": "WARNING"}
    with subprocess.Popen([sys.executable, "-m", "src.app"], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(base + "/healthz", timeout=1):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the server did not start")
                    time.sleep(0.05)
            yield base, proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)


class Slot:
    """One stream's client side: a persona, a session, an open socket, an HTTP connection."""

    def __init__(self, base: str, index: int):
        self.name = f"Bench {index}"
        self.last_body: dict | None = None
        persona = _call(base, "POST", "/api/personas", {"name": self.name})
        self.session_id = _call(base, "POST", "/api/sessions",
                                {"persona_id": persona["id"]})["id"]
        self.ws = websocket.create_connection(base.replace("http", "ws") + "/ws/chat",
                                              timeout=60)
        self.port = int(base.rsplit(":", 1)[1])
        self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def ws_ttft(self) -> float:
        """Send a chat frame; seconds to the first chunk frame (then read to `done`)."""
        frame = json.dumps({"type": "chat", "session_id": self.session_id, "message": "Hi!"})
        start, first = time.perf_counter(), None
        self.ws.send(frame)
        while True:
            event = json.loads(self.ws.recv())
            if event["type"] == "chunk" and first is None:
                first = time.perf_counter()
            elif event["type"] in ("done", "error"):
                break
        if event["type"] != "done" or first is None:
            raise RuntimeError(f"WebSocket stream failed: {event}")
        return first - start

    def sse_ttft(self) -> float:
        """POST /api/chat/stream; seconds to the first `chunk` event (then read to the end)."""
        self.http.close()
        self.http.connect()
        body = json.dumps({"session_id": self.session_id, "message": "Hi!"})
        start, first, last = time.perf_counter(), None, None
        self.http.request("POST", "/api/chat/stream", body,
                          {"Content-Type": "application/json"})
        response = self.http.getresponse()
        for line in iter(response.readline, b""):
            if line.startswith(b"event: "):
                last = line[7:].strip()
                if last == b"chunk" and first is None:
                    first = time.perf_counter()
        response.close()
        if last != b"done" or first is None:
            raise RuntimeError(f"SSE stream failed (last event {last!r})")
        return first - start

    def close(self) -> None:
        """Close both connections."""
        self.ws.close()
        self.http.close()


def sdk_ttft(sdk: anthropic.Anthropic, body: dict) -> float:
    """Seconds from messages.create(stream=True) to its first text delta (then read to the end).

    The raw event stream is what our server reads too (`api_request/stream_run.py`);
    `messages.stream()` would also rebuild a message snapshot on every event, a cost our side
    does not pay, which would slow the baseline and flatter the ratio.
    """
    start, first = time.perf_counter(), None
    with sdk.messages.create(stream=True, model=body["model"], max_tokens=body["max_tokens"],
                             system=body["system"], messages=body["messages"]) as stream:
        for event in stream:
            if (first is None and event.type == "content_block_delta"
                    and event.delta.type == "text_delta"):
                first = time.perf_counter()
    if first is None:
        raise RuntimeError("SDK stream produced no text")
    return first - start


def one_round(pool, kind: str, slots: list[Slot], sdk) -> list[float]:
    """N streams of one kind started together; their TTFTs."""
    barrier = threading.Barrier(len(slots))

    def go(slot: Slot) -> float:
        barrier.wait()
        if kind == "sdk":
            return sdk_ttft(sdk, slot.last_body)
        return slot.ws_ttft() if kind == "ws" else slot.sse_ttft()
    return list(pool.map(go, slots))


def remember_bodies(fake, slots: list[Slot], since: int) -> None:
    """Each slot's latest chat request as the fake received it: the SDK baseline sends exactly
    that (same system prompt, same history), so the fake does the same work for both."""
    by_name = {f"You are {slot.name},": slot for slot in slots}
    for request in fake.requests[since:]:
        if not request.stream or request.tools:
            continue
        text = request.system[0]["text"] if isinstance(request.system, list) else ""
        slot = by_name.get(text.split(",", 1)[0] + ",")
        if slot is not None:
            slot.last_body = request.body


def measure(base: str, fake, streams: int, runs: int, warmup: int = 2) -> dict:
    """Median TTFT per kind over `runs` rounds of `streams` concurrent streams."""
    slots = [Slot(base, i) for i in range(streams)]
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    try:
        with anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0,
                                 timeout=60.0) as sdk, ThreadPoolExecutor(streams) as pool:
            since = len(fake.requests)
            one_round(pool, "ws", slots, sdk)
            for i in range(warmup + runs):
                order = KINDS[i % 3:] + KINDS[:i % 3]
                for kind in order:
                    remember_bodies(fake, slots, since)
                    since = len(fake.requests)
                    ttfts = one_round(pool, kind, slots, sdk)
                    if i >= warmup:
                        samples[kind].extend(ttfts)
    finally:
        for slot in slots:
            slot.close()
    return {kind: statistics.median(values) for kind, values in samples.items()}


def peak_rss_kib(pid: int) -> dict[int, int]:
    """VmHWM (peak resident set, KiB) of the server process and its children (the worker)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    peaks = {}
    for each in pids:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks[each] = int(line.split()[1])
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="rounds per setting (>= 20)")
    parser.add_argument("--streams", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--event-delay", type=float, default=0.004,
                        help="seconds between the fake's SSE events")
    parser.add_argument("--first-token-delay", type=float, default=0.0,
                        help="seconds the fake waits after the headers (the model's latency)")
    args = parser.parse_args()
    runs = max(20, args.runs)
    with FakeClaude() as fake, tempfile.TemporaryDirectory() as data_dir:
        reply = replies.text(TEXT, event_delay=args.event_delay)
        fake.default = (replies.delayed(reply, args.first_token_delay, after_headers=True)
                        if args.first_token_delay else reply)
        with serve(fake.url, data_dir) as (base, proc):
            results = {n: measure(base, fake, n, runs) for n in args.streams}
            peaks = peak_rss_kib(proc.pid)
        if fake.errors:
            raise fake.errors[0]
    print(f"{runs} rounds per setting; fake: {args.event_delay * 1000:.1f} ms between events, "
          f"{args.first_token_delay * 1000:.0f} ms before the first; median time to first "
          "chunk (ms) and ratio to the SDK (target <= 1.10)")
    print(f"{'streams':>8} {'SDK':>8} {'WS':>8} {'SSE':>8} {'WS/SDK':>8} {'SSE/SDK':>8}")
    for n, medians in results.items():
        sdk, ws, sse = (medians[k] * 1000 for k in KINDS)
        print(f"{n:>8} {sdk:>8.2f} {ws:>8.2f} {sse:>8.2f} {ws / sdk:>8.3f} {sse / sdk:>8.3f}")
    total = sum(peaks.values())
    detail = ", ".join(f"pid {pid}: {kib / 1024:.1f} MiB" for pid, kib in peaks.items())
    print(f"peak server RSS (VmHWM) after {max(args.streams)} streams: "
          f"{total / 1024:.1f} MiB ({detail})")


if __name__ == "__main__":
    main()
