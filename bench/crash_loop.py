"""Crash loop: SIGKILL the served app again and again under load, and check what survived.

The app runs as in production (`python -m src.app`: gunicorn, 2 gthread workers) in its own
process group, against the Claude fake in its own process (bench/crash_fake.py). Each cycle
starts the server, runs clients for a random 0.2 to 2.5 s (SSE chats carrying unique
`FACT-…` tokens, cortex PUTs with If-Match, on-demand cortex updates, personas created, edited
and deleted while GETs and PUTs race the DELETE), then SIGKILLs master and workers at once. This
process is a child subreaper and reaps the killed workers only after the next start-up, so the
restart meets them as zombies (as under a slow container init). After each restart it checks,
straight from the data dir:
  torn files            a cortex file that is no recorded revision
  lost acked writes     a chat turn answered `done`, or a PUT answered 200, that is not stored
  resurrected personas  a persona whose DELETE answered 200 but whose row/files/revisions exist
  stuck jobs            a job `running` 5 s after start-up with a dead owner or expired lease
  duplicated facts      a FACT token twice in a memory.md (a range applied twice)
  unprocessed ranges    an update's revisions applied beyond the persona's processed mark
All must be 0; the exit status is 1 otherwise.

    .venv/bin/python bench/crash_loop.py [--kills 200] [--seed 1] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import crash_checks as checks  # noqa: E402
from bench.crash_clients import Load  # noqa: E402
from src.utils.cortex.ownership import owner_alive, owners_dir  # noqa: E402

KEY = "sk-ant-crash-loop-0000000000000000"
PR_SET_CHILD_SUBREAPER = 36
START_SECONDS = 60.0
METRICS = ("torn_files", "lost_acked_writes", "resurrected_personas", "stuck_jobs",
           "duplicated_facts", "unprocessed_ranges")


class Server:
    """`python -m src.app` (2 workers) in its own process group; `kill()` SIGKILLs all of it."""

    def __init__(self, data_dir: str, fake_url: str, port: int, log):
        env = {**os.environ, "PERSONA_DATA_DIR": data_dir, "PERSONA_PORT": str(port),
               "PERSONA_WORKERS": "2", "ANTHROPIC_API_KEY": KEY,
               "ANTHROPIC_BASE_URL": fake_url, "PERSONA_LOG_LEVEL": "WARNING"}
        self.base = f"http://127.0.0.1:{port}"
        self.data_dir = data_dir
        self.proc = subprocess.Popen([sys.executable, "-m", "src.app"], cwd=ROOT, env=env,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_ready(self) -> None:
        """Until /healthz answers and both workers hold their job-owner locks."""
        import urllib.request
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=2):
                    if self._live_owners() >= 2:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the server did not come up")

    def workers(self) -> list[int]:
        """The pids of the master's children (the gunicorn workers)."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(stat[1]) == self.proc.pid:
                    found.append(int(entry))
        return found

    def kill(self) -> list[int]:
        """SIGKILLs master and workers together; returns the worker pids (left unreaped)."""
        workers = self.workers()
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        return workers

    def _live_owners(self) -> int:
        directory = owners_dir(self.data_dir)
        names = os.listdir(directory) if os.path.isdir(directory) else []
        return sum(owner_alive(directory, n[:-5]) for n in names if n.endswith(".lock"))


def reap(pids: list[int]) -> int:
    """Reaps workers of a killed server (our children, as subreaper); returns how many were
    zombies until now."""
    zombies = 0
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            zombies += state == "Z"
            os.waitpid(pid, 0)
        except (OSError, ChildProcessError):
            pass
    return zombies


def check(data_dir: str, load: Load) -> dict[str, list[str]]:
    """Every invariant, after a restart."""
    return {
        "torn_files": checks.torn_files(data_dir),
        "lost_acked_writes": checks.lost_writes(data_dir, load.acked_chats, load.acked_puts,
                                                load.delete_attempted),
        "resurrected_personas": checks.resurrected(data_dir, load.acked_deletes),
        "stuck_jobs": checks.stuck_jobs(data_dir),
        "duplicated_facts": checks.duplicated_facts(data_dir),
        "unprocessed_ranges": checks.unprocessed_ranges(data_dir),
    }


def run(kills: int, seed: int, data_dir: str) -> dict:
    """The whole loop; returns the totals."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    rng = random.Random(seed)
    fake = subprocess.Popen([sys.executable, str(ROOT / "bench" / "crash_fake.py")], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    fake_url = fake.stdout.readline().strip()
    port = _free_port()
    found = {name: set() for name in METRICS}
    zombies, orphans = 0, []
    load = Load(rng)
    server = None
    started = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
    with open(os.path.join(data_dir, "server.log"), "ab") as log:
        try:
            for cycle in range(kills + 1):
                server = Server(data_dir, fake_url, port, log)
                server.wait_ready()
                zombies += reap(orphans)
                for name, items in check(data_dir, load).items():
                    found[name].update(items)
                if cycle == kills:
                    server.kill()
                    break
                load.setup(server.base)
                load.start(server.base)
                time.sleep(rng.uniform(0.2, 2.5))  # the kill lands at a random moment
                orphans = server.kill()
                load.stop()
                if cycle % 10 == 0:
                    print(f"cycle {cycle}: {load.totals()} "
                          f"{ {k: len(v) for k, v in found.items()} }", flush=True)
        finally:
            if server is not None and server.proc.poll() is None:
                reap(server.kill())
            load.stop()
            fake.stdin.close()
            fake.wait()
    return {"kills": kills, "seconds": round(time.monotonic() - started),
            "zombie_workers_at_restart": zombies, **load.totals(),
            **checks.job_stats(data_dir),
            **{name: len(items) for name, items in found.items()},
            "examples": {name: sorted(items)[:5] for name, items in found.items() if items}}


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", default=None, help="kept afterwards (default: a temp dir)")
    args = parser.parse_args()
    if args.data_dir:
        os.makedirs(args.data_dir, exist_ok=True)
        result = run(args.kills, args.seed, args.data_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="crash-loop-") as data_dir:
            result = run(args.kills, args.seed, data_dir)
    print(json.dumps(result, indent=2))
    return 1 if any(result[name] for name in METRICS) else 0


if __name__ == "__main__":
    sys.exit(main())
