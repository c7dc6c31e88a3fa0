"""The chat bench's processes: the fake Claude, the raw-SDK baseline workers and the app server.

Each runs in its own process so no side shares a GIL with another: `python bench/bench_procs.py
fake` serves FakeClaude and answers commands on stdin (`latency <s>`, `bodies`, `quit`);
`python bench/bench_procs.py sdk <fake_url>` reads a round per stdin line (the request bodies
to send, the turns per stream, the wall-clock instant to start) and prints the times to the
first text delta; `python bench/bench_procs.py clients <app_url> <offset> <step> [<lean_url>]
[<name>=<url>...]` does the same for the app's WebSocket and SSE clients (bench_clients.run_clients;
each named URL a further SSE server, or with `ws:` before the name a further lean server's
WebSocket), and `... lean-clients
<offset> <step> <name>=<url>...` for lean servers alone (run_lean_clients). All speak one JSON
document per line.
"""
from __future__ import annotations

import gc
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from src.blocking_report import ThreadClocks  # noqa: E402
from tests.support.worker_sockets import worker_pids  # noqa: E402

KEY = "sk-ant-bench-0000000000000000"
OPENAI = "openai_compatible"
OPENAI_MODEL = "llama3.2:3b"
FREEZE_EVERY = 100  # requests the fake answers between freezes of its heap (`freeze_heap`)
WORDS = ("Thanks for telling me about the trip. The mountains in autumn sound wonderful, and I "
         "remember you wanted to see the lake at sunrise. Did the weather hold?")


def _chunks(n: int) -> list[str]:
    bounds = [len(WORDS) * i // n for i in range(n + 1)]
    return [WORDS[a:b] for a, b in itertools.pairwise(bounds)]


def _update_reply(body: dict, replies):
    """A cortex update's answer: nothing to remember, or with BENCH_UPDATE_EDITS=1 one line
    inserted into memory.md (a tool round, staging and the applied edit: an update's real
    work), then a closing text."""
    if os.environ.get("BENCH_UPDATE_EDITS") != "1":
        return replies.text("Nothing new to remember.")
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return replies.text("Remembered.")
    return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                         "insert_text": "- Talked about the trip.\n"})])


def freeze_heap(collect: bool = True) -> None:
    """Puts every object alive now out of the garbage collector's reach, the freeze of the app
    workers' `worker_memory.settle_heap` without its rarer generation-0 collections: the fake
    and the raw-SDK baseline keep CPython's own thresholds (the lean servers, compared with the
    app on CPU, take `settle_heap` whole). Without it, each of them stalled now and then for a
    full collection of its heap, its imports and what it keeps: 60-130 ms every half a minute
    or so, a whole round's first tokens late in whatever kind of round it fell in
    (docs/performance.md, "Thirteenth session")."""
    if collect:
        gc.collect()
    gc.freeze()


def run_fake(event_delay: float, chunks: int, provider: str = "anthropic") -> None:
    """FakeClaude (or FakeOpenAI for `openai_compatible`) in this process: chat replies paced
    at `event_delay`, titles and cortex updates answered at once; stdin commands change the
    first-token latency or dump bodies. The listen backlog is larger than any burst: a dropped
    connection would retry after a second and inflate every p95."""
    from src.utils.services.chat_titles import TITLE_MAX_TOKENS
    from tests.fakes import claude as fake_claude
    from tests.fakes.claude import FakeClaude, replies
    from tests.fakes.openai_compat import FakeOpenAI

    fake_claude._Server.request_queue_size = 2048
    latency = [0.0]
    chat = replies.text(WORDS, chunks=_chunks(chunks), event_delay=event_delay)

    answered = itertools.count(1)

    def answer(body):
        if next(answered) % FREEZE_EVERY == 0:
            freeze_heap(collect=False)  # the requests it keeps (all of them) are never scanned
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("A title")
        if body.get("tools"):
            return _update_reply(body, replies)
        return replies.delayed(chat, latency[0], after_headers=True) if latency[0] else chat

    with (FakeOpenAI(validate=False) if provider == OPENAI else FakeClaude()) as fake:
        fake.default = replies.scripted(answer)
        print(json.dumps({"url": fake.url}), flush=True)
        seen = 0
        for line in sys.stdin:
            command, _, arg = line.strip().partition(" ")
            if command == "latency":
                latency[0] = float(arg)
                print("{}", flush=True)
            elif command == "bodies":
                requests = fake.requests
                bodies = [r.body for r in requests[seen:] if r.stream and not r.tools
                          and r.body.get("max_tokens") != TITLE_MAX_TOKENS]
                seen = len(requests)
                print(json.dumps({"bodies": bodies, "errors": [str(e) for e in fake.errors]}),
                      flush=True)
            elif command == "quit":
                break


def sdk_ttft(sdk, body: dict) -> float:
    """Seconds from `messages.create(stream=True)` (the call the app makes) to the first text
    delta; the rest of the stream is read to its end."""
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


def openai_ttft(sdk, body: dict) -> float:
    """The same for the `openai` SDK's `chat.completions.create(stream=True)`."""
    start, first = time.perf_counter(), None
    kwargs = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    with sdk.chat.completions.create(stream=True, stream_options={"include_usage": True},
                                     **kwargs) as stream:
        for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter()
    if first is None:
        raise RuntimeError("SDK stream produced no text")
    return first - start


def run_sdk(fake_url: str, provider: str = "anthropic") -> None:
    """The raw-SDK baseline: one client (a warm connection pool), a thread per stream."""
    if provider == OPENAI:
        import openai
        client, ttft = openai.OpenAI(api_key=KEY, base_url=fake_url, max_retries=0,
                                     timeout=120.0), openai_ttft
    else:
        import anthropic
        client, ttft = anthropic.Anthropic(api_key=KEY, base_url=fake_url, max_retries=0,
                                           timeout=120.0), sdk_ttft
    with client as sdk, ThreadPoolExecutor(256) as pool:
        freeze_heap()
        print("{}", flush=True)
        for line in sys.stdin:
            job = json.loads(line)
            if job.get("quit"):
                break

            def go(body, turns=job["turns"], at=job["at"]):
                time.sleep(max(0.0, at - time.time()))
                return [ttft(sdk, body) for _ in range(turns)]
            cpu = time.process_time()
            results = list(pool.map(go, job["bodies"]))
            print(json.dumps({"ttfts": [t for each in results for t in each],
                              "cpu": time.process_time() - cpu}), flush=True)
            freeze_heap(collect=False)  # what the first rounds imported and cached


class Child:
    """A helper process spoken to in JSON lines."""

    def __init__(self, *args: str, script: str = __file__):
        self.proc = subprocess.Popen([sys.executable, script, *args], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.hello = self.read()

    def send(self, text: str) -> None:
        """Writes one command line."""
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict:
        """Reads one JSON answer."""
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("a bench helper process died")
        return json.loads(line)

    def ask(self, text: str) -> dict:
        """Sends a command and returns its answer."""
        self.send(text)
        return self.read()

    def close(self) -> None:
        """Ends the process (again: nothing)."""
        if self.proc.stdin.closed:
            return
        try:
            self.send("quit" if self.hello.get("url") else '{"quit": true}')
        except OSError:
            pass
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_app(fake_url: str, data_dir: str, workers: int, extra_env: dict | None = None,
              root: Path = ROOT):
    """`python -m src.app` (the production server, from the source tree `root`) in a
    subprocess; yields (base_url, process)."""
    port = free_port()
    env = {**os.environ, "PERSONA_DATA_DIR": data_dir, "PERSONA_PORT": str(port),
           "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_url,
           "PERSONA_LOG_LEVEL": "WARNING", "PERSONA_WORKERS": str(workers), **(extra_env or {})}
    with subprocess.Popen([sys.executable, "-m", "src.app"], cwd=root, env=env,
                          stdout=subprocess.DEVNULL, stderr=None if os.environ.get("BENCH_SERVER_STDERR") else subprocess.DEVNULL) as proc:
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 180  # a loaded machine boots slowly
            while True:
                try:
                    with urllib.request.urlopen(base + "/healthz", timeout=1):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the server did not start") from None
                    time.sleep(0.05)
            yield base, proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def tree_pids(pid: int) -> list[int]:
    """`pid` and every process below it (the master, its workers and their helpers)."""
    found, todo = [], [pid]
    while todo:
        each = todo.pop()
        found.append(each)
        for task in Path(f"/proc/{each}/task").glob("*/children"):
            try:
                todo += [int(p) for p in task.read_text().split()]
            except FileNotFoundError:
                continue
    return found


def app_parts(master: int) -> dict[str, list[int]]:
    """The app's processes by part: `workers` (the gunicorn workers, with their helpers) and
    `memory` (the memory process, src/memory_process.py; none with PERSONA_MEMORY_PROCESS=0).
    The master is in neither."""
    parts: dict[str, list[int]] = {"workers": [], "memory": []}
    for child in worker_pids(master):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        parts["memory" if b"src.memory_process" in command else "workers"] += tree_pids(child)
    return parts


_CLOCKS: dict[int, tuple[int, ThreadClocks]] = {}  # pid -> (its start time, its threads' clocks)


def cpu_seconds(pids: list[int]) -> float:
    """CPU time `pids` have run, in seconds, to the nanosecond: each process's threads'
    `schedstat` (ended threads included from their last reading, `ThreadClocks`). utime +
    stime in `/proc/<pid>/stat` come in 10 ms ticks: a round of 8 turns at 5 ms each read its
    4 processes to about ±8 % (eighth session); the run time a thread spent between a
    round's last reading and its end is the only part lost."""
    total = 0.0
    for each in pids:
        try:
            started = int(Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()[19])
            known = _CLOCKS.get(each)
            if known is None or known[0] != started:  # new, or the pid was reused
                known = _CLOCKS[each] = (started, ThreadClocks(each))
            total += known[1].read()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def tick_seconds(pids: list[int]) -> float:
    """utime + stime of `pids` (ended threads included), in seconds: /proc's 10 ms ticks."""
    total = 0
    for each in pids:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def pss_kib(pid: int) -> int:
    """Proportional set size of the master and its workers together, in KiB: each page shared
    between them (the interpreter, imported modules) counted once, unlike summed VmRSS."""
    total = 0
    for each in [pid, *worker_pids(pid)]:
        for line in Path(f"/proc/{each}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


class MemoryPeak:
    """Samples summed VmRSS and PSS of the server every `every` seconds while in the `with`."""

    def __init__(self, pid: int, every: float = 0.25):
        self.pid, self.every = pid, every
        self.rss_kib = self.pss_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def _sample(self) -> None:
        try:
            self.rss_kib = max(self.rss_kib, memory_kib(self.pid, "VmRSS"))
            self.pss_kib = max(self.pss_kib, pss_kib(self.pid))
        except FileNotFoundError:  # a worker was replaced between listing and reading
            pass


def memory_kib(pid: int, field: str = "VmHWM") -> int:
    """`field` (VmHWM: peak, VmRSS: now) of the master and its children (the workers and the
    memory process) together, in KiB."""
    total = 0
    for each in [pid, *worker_pids(pid)]:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                total += int(line.split()[1])
    return total


if __name__ == "__main__":
    if sys.argv[1] == "fake":
        run_fake(float(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:5])
    elif sys.argv[1] == "sdk":
        threading.stack_size(512 * 1024)
        run_sdk(*sys.argv[2:4])
    elif sys.argv[1] == "clients":
        from bench.bench_clients import run_clients
        threading.stack_size(512 * 1024)
        lean = next((arg for arg in sys.argv[5:6] if "=" not in arg), None)
        named = [arg.split("=", 1) for arg in sys.argv[5:] if "=" in arg]
        run_clients(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), lean,
                    {name: url for name, url in named if not name.startswith("ws:")},
                    {name[3:]: url for name, url in named if name.startswith("ws:")})
    elif sys.argv[1] == "lean-clients":
        from bench.bench_clients import run_lean_clients
        threading.stack_size(512 * 1024)
        run_lean_clients(dict(arg.split("=", 1) for arg in sys.argv[4:]), int(sys.argv[2]),
                         int(sys.argv[3]))
