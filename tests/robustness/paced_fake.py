"""The stall test's Claude fake in a process of its own: one long reply paced CHUNK_SECONDS
between events, for every request.

    python -m tests.robustness.paced_fake   # prints {"url": ...}; ends when stdin closes

In the test's own process the fake's pacing thread shared a GIL with the uploading and reading
threads of the test: one of them descheduled while holding it delayed the next chunk, and the
gap was charged to the worker (1.9 s once, on a loaded machine). In its own process its delays
are its own, and `stall_watch` nets out their run delay like the worker's.
"""
import json
import subprocess
import sys
from pathlib import Path
from typing import Self

from tests.fakes.claude import FakeClaude, replies
from tests.robustness.stall_watch import CHUNK_SECONDS, CHUNKS

WORDS = [f"w{i} " for i in range(CHUNKS)]


class PacedFake:
    """The fake's process, started by the test: `url`, and `pid` for its run delay."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.robustness.paced_fake"],
                                     cwd=Path(__file__).resolve().parents[2],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line, "the paced fake did not start"
        self.url = json.loads(line)["url"]
        self.pid = self.proc.pid

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.proc.wait(30)


def main() -> None:
    with FakeClaude() as claude:
        claude.default = replies.text("".join(WORDS), chunks=WORDS, event_delay=CHUNK_SECONDS)
        print(json.dumps({"url": claude.url}), flush=True)
        sys.stdin.read()  # until the test closes stdin (or ends)


if __name__ == "__main__":
    main()
