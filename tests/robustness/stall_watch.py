"""Watching one gevent worker while hostile uploads run: `/healthz` latency and the gaps between
the chunks of a chat streaming over SSE, plus the blocks gevent's monitor reported.

A busy machine (2 cores, a dozen processes) delays every thread by itself: a poll can take a
second while the worker did nothing wrong. So each latency and gap is counted net of the time
the processes involved (the worker, the paced Claude fake of `paced_fake.py`, and this test's
process, which measures) sat runnable waiting for a CPU, summed over all their threads and read
from the kernel's scheduler statistics (`/proc/<pid>/task/<tid>/schedstat`, run delay; see
`_Waits`). What is left is time the worker was not serving although it could have run:
blocked in a system call, or computing.
"""
import itertools
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from src.blocking_report import ThreadClocks
from tests.chat.chat_support import SseStream

POLL_SECONDS = 0.02  # pacing of the health poller (not a wait for a condition)
CHUNK_SECONDS = 0.05  # the fake's pace between stream events
CHUNKS = 4000  # 200 s of streaming: longer than any upload phase


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
        """The slowest `/healthz` answer that overlapped the phase or came right after it
        (seconds): a phase shorter than the poller's pace may fall between two polls, and the
        first poll after it still sees a worker the phase left blocked."""
        overlapping = [took for began, took in self.healthz
                       if began <= self.ended and began + took >= self.started]
        after = [took for began, took in self.healthz if began > self.ended][:1]
        return max(overlapping + after)

    @property
    def worst_extra_gap(self) -> float:
        """The longest wait between two chunks beyond the fake's own pace (seconds), counting
        the chunks around the phase's start and end."""
        inside = [net for t, net in self.chunks if self.started <= t <= self.ended]
        before = [net for t, net in self.chunks if t < self.started][-1:]
        after = [net for t, net in self.chunks if t > self.ended][:1]
        times = before + inside + after
        gaps = [b - a for a, b in itertools.pairwise(times)]
        return max(gaps, default=self.ended - self.started) - CHUNK_SECONDS

    def summary(self) -> str:
        """The figures, for a failure message or the report."""
        return (f"worst /healthz {self.worst_healthz:.3f} s over {len(self.healthz)} polls, "
                f"worst extra chunk gap {self.worst_extra_gap:.3f} s, phase "
                f"{self.ended - self.started:.2f} s, statuses {sorted(set(self.statuses))}")


def worker_pid(server) -> int:
    """The pid of the server's only worker process: the gunicorn master's child that is not
    the memory process (src/memory_process.py)."""
    master = server.proc.pid
    with open(f"/proc/{master}/task/{master}/children", encoding="ascii") as handle:
        children = [int(pid) for pid in handle.read().split()]
    workers = [pid for pid in children if not _is_memory_process(pid)]
    assert len(workers) == 1, children
    return workers[0]


def _is_memory_process(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"src.memory_process" in handle.read()
    except OSError:  # it ended: not a worker either way
        return True


def watch(server, fake_pid: int, session_id: str, requests: list) -> Stalls:
    """Streams a reply in `session_id` (from the paced fake, process `fake_pid`) and polls
    `/healthz` while `requests` (callables returning a status) run all at once; stops the reply
    at the end."""
    stalls, stop = Stalls(), threading.Event()
    waited = _Waits(worker_pid(server), fake_pid)
    poller = threading.Thread(target=_poll, args=(server, stalls, stop, waited), daemon=True)
    stream = SseStream(server.url, "/api/chat/stream", {"session_id": session_id,
                                                        "message": "Talk for a while."})
    reader = threading.Thread(target=_follow, args=(stream, stalls, waited), daemon=True)
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
        _wait_for(lambda: any(t > stalls.ended for t, _ in stalls.chunks)
                  and any(began > stalls.ended for began, _ in stalls.healthz))
    finally:
        stop.set()
        server.call("POST", f"/api/sessions/{session_id}/stop", {})
        poller.join(30)
        reader.join(30)
        stream.close()
    return stalls


def blocks(report: Path, since: int = 0) -> list[dict]:
    """Every block of the event loop the monitor reported after byte `since` of its report,
    one per block (its last report: the longest `wall` and `cpu`)."""
    if not report.exists():
        return []
    with open(report, "rb") as handle:
        handle.seek(since)
        lines = handle.read().decode("utf-8").splitlines()
    found: dict = {}
    for line in lines:
        record = json.loads(line)
        found[(record["pid"], record["since"])] = record
    return list(found.values())


def stalling_blocks(report: Path, since: int, over: float) -> list[dict]:
    """The blocks that held the loop for more than `over` seconds of its own doing: computing
    (the loop thread's CPU) or asleep in a system call (`stalled`: the block's wall time less
    the worker's waits for a CPU and the loop's disk waits; src/blocking_report.py)."""
    return [b for b in blocks(report, since)
            if b["cpu"] > over or b.get("stalled", 0.0) > over]


def where(block: dict) -> str:
    """The innermost frame of our code in a block's stack."""
    stack = block["report"]
    frames = [line.strip() for line in stack.splitlines() if line.strip().startswith("File")]
    ours = [f for f in frames if "site-packages" not in f]
    return " < ".join((ours or frames or ["?"])[-1:] + frames[-1:])


class _Waits:
    """The run delay of every thread of the worker, of the fake, and of this process, ended
    threads included (`ThreadClocks`). Every thread counts, not only the one serving or
    measuring: a thread holding its process's GIL while it waits for a CPU keeps the others
    waiting too (asleep on the GIL, which their own run delay does not show). In this process
    the uploading and reading threads share a GIL with the measuring ones. On a quiet machine
    all of it is near zero, so the bound stays strict. Called from the poller and the reader
    at once, hence the lock."""

    def __init__(self, *pids: int) -> None:
        self._clocks = [ThreadClocks(pid) for pid in (*pids, os.getpid())]
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return sum(clock.read()[1] for clock in self._clocks)


def _poll(server, stalls: Stalls, stop: threading.Event, waited: _Waits) -> None:
    while not stop.is_set():
        began, delay = time.monotonic(), waited.now()
        assert server.call("GET", "/healthz")[0] == 200
        took = time.monotonic() - began - (waited.now() - delay)
        stalls.healthz.append((began, max(took, 0.0)))
        stop.wait(POLL_SECONDS)


def _follow(stream: SseStream, stalls: Stalls, waited: _Waits) -> None:
    """Chunk arrival times on a clock that stops while the worker or this thread waits for a
    CPU (so a gap between two chunks is net of that waiting)."""
    while (event := stream.next_event()) is not None and event[0] == "chunk":
        arrived = time.monotonic()
        stalls.chunks.append((arrived, arrived - waited.now()))


def _wait_for(condition, deadline: float = 60.0) -> None:
    """Waits (in small steps) until `condition()`; the deadline only bounds a failure."""
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, "the stream or the poller did not get going"
        time.sleep(0.01)
