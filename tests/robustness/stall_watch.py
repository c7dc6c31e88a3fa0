"""Watching one gevent worker while hostile uploads run: `/healthz` latency and the gaps between
the chunks of a chat streaming over SSE, plus the blocks gevent's monitor reported."""
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.chat.chat_support import SseStream

POLL_SECONDS = 0.02  # pacing of the health poller (not a wait for a condition)
CHUNK_SECONDS = 0.05  # the fake's pace between stream events
CHUNKS = 1200  # a minute of streaming: longer than any upload phase


@dataclass
class Stalls:
    """What one watched phase measured."""

    statuses: list = field(default_factory=list)
    healthz: list = field(default_factory=list)
    chunks: list = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0

    @property
    def worst_healthz(self) -> float:
        """The slowest `/healthz` answer that overlapped the phase (seconds)."""
        return max(took for began, took in self.healthz
                   if began <= self.ended and began + took >= self.started)

    @property
    def worst_extra_gap(self) -> float:
        """The longest wait between two chunks beyond the fake's own pace (seconds), counting
        the chunks around the phase's start and end."""
        inside = [t for t in self.chunks if self.started <= t <= self.ended]
        before = [t for t in self.chunks if t < self.started][-1:]
        after = [t for t in self.chunks if t > self.ended][:1]
        times = before + inside + after
        gaps = [b - a for a, b in zip(times, times[1:])]
        return max(gaps, default=self.ended - self.started) - CHUNK_SECONDS

    def summary(self) -> str:
        """The figures, for a failure message or the report."""
        return (f"worst /healthz {self.worst_healthz:.3f} s over {len(self.healthz)} polls, "
                f"worst extra chunk gap {self.worst_extra_gap:.3f} s, phase "
                f"{self.ended - self.started:.2f} s, statuses {sorted(set(self.statuses))}")


def watch(server, session_id: str, requests: list) -> Stalls:
    """Streams a reply in `session_id` and polls `/healthz` while `requests` (callables
    returning a status) run all at once; stops the reply at the end."""
    stalls, stop = Stalls(), threading.Event()
    poller = threading.Thread(target=_poll, args=(server, stalls, stop), daemon=True)
    stream = SseStream(server.url, "/api/chat/stream", {"session_id": session_id,
                                                        "message": "Talk for a while."})
    reader = threading.Thread(target=_follow, args=(stream, stalls), daemon=True)
    try:
        stream.conn.sock.settimeout(300)  # a stalled worker must show as a gap, not a timeout
        assert stream.next_event()[0] == "start"
        reader.start()
        poller.start()
        _wait_for(lambda: len(stalls.chunks) >= 5 and len(stalls.healthz) >= 5)
        stalls.started = time.monotonic()
        with ThreadPoolExecutor(len(requests)) as pool:
            stalls.statuses = list(pool.map(lambda call: call(), requests))
        stalls.ended = time.monotonic()
        _wait_for(lambda: any(t > stalls.ended for t in stalls.chunks))
    finally:
        stop.set()
        server.call("POST", f"/api/sessions/{session_id}/stop", {})
        poller.join(30)
        reader.join(30)
        stream.close()
    return stalls


def cpu_blocks(report: Path, since: int, over: float) -> list[dict]:
    """Blocks of the event loop that spent more than `over` seconds of the loop thread's own
    CPU (one per block: its last report), among the report's lines after byte `since`."""
    if not report.exists():
        return []
    with open(report, "rb") as handle:
        handle.seek(since)
        lines = handle.read().decode("utf-8").splitlines()
    blocks: dict = {}
    for line in lines:
        record = json.loads(line)
        blocks[(record["pid"], record["since"])] = record
    return [b for b in blocks.values() if b["cpu"] > over]


def _poll(server, stalls: Stalls, stop: threading.Event) -> None:
    while not stop.is_set():
        began = time.monotonic()
        assert server.call("GET", "/healthz")[0] == 200
        stalls.healthz.append((began, time.monotonic() - began))
        stop.wait(POLL_SECONDS)


def _follow(stream: SseStream, stalls: Stalls) -> None:
    while (event := stream.next_event()) is not None and event[0] == "chunk":
        stalls.chunks.append(time.monotonic())


def _wait_for(condition, deadline: float = 60.0) -> None:
    """Waits (in small steps) until `condition()`; the deadline only bounds a failure."""
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, "the stream or the poller did not get going"
        time.sleep(0.01)
