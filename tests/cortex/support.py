"""Helpers for the cortex tests: child processes read line by line with a deadline, snapshots."""
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.exchange import readable

REPO = Path(__file__).resolve().parents[2]

# Hostile persona ids and filenames: traversal, encodings, absolute paths, backslashes, NUL,
# case and Unicode look-alikes (fullwidth letters, Cyrillic а/е/о), overlong, trailing newline.
BAD_PERSONA_IDS = [
    "", "..", "../..", "../etc", "..%2f", "%2e%2e%2f", "%252e%252e%252f", "/etc", "/etc/passwd",
    "/tmp", "..\\..\\windows", "default\\..", "abcdefgh\\..", "default\x00", "abcdefgh\x00",
    "\x00", "default/", "default/..", "abcdefgh/../..", "DEFAULT", "Default", "ABCDEFGH",
    "ｄｅｆａｕｌｔ", "dеfault", "аbcdefgh", "abcdefgh\n", "default\n", "abcdefgh ",
    " abcdefgh",
    "abcdefg", "a" * 33, "a" * 1000, "abc-defgh", "abc_defgh", "abc.defgh", "custom",
    "１２３４５６７８", None, 12345678, b"default", ["default"], {"id": "default"},
]
BAD_FILENAMES = [
    "", "..", "../memory.md", "../../app.db", "..%2fmemory.md", "%2e%2e%2fmemory.md",
    "%252e%252e%252f", "/etc/passwd", "/memory.md", "..\\memory.md", "memory.md\\",
    "memory.md\x00", "memory.md\x00.txt", "\x00", "memory.md/", "memory.md/.", "./memory.md",
    "MEMORY.MD", "Memory.md", "memory.MD", "ｍemory.md", "memоry.md", "memory.md\n",
    " memory.md", "memory.md ", "memory", "memory.txt", "app.db", "secrets.json", ".locks",
    "x" * 1000, None, 5, b"memory.md", ["memory.md"],
]


def spawn(*args: str) -> subprocess.Popen:
    """Starts `python -m tests.cortex.cortex_child <args>` with pipes for stdin and stdout."""
    return subprocess.Popen([sys.executable, "-m", "tests.cortex.cortex_child", *args],
                            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)


class Lines:
    """Reads a child's stdout line by line, failing after a deadline instead of hanging."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self._buffer = proc, b""

    def next(self, timeout: float = 20.0) -> str:
        """The next line (without newline); AssertionError on timeout or end of output."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("child process gave no output in time")
            if readable(self.proc.stdout, remaining):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError("child exited: " + self.proc.stderr.read().decode())
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def until(self, prefix: str, timeout: float = 30.0) -> list[str]:
        """All lines up to and including the first one starting with `prefix`."""
        lines = []
        while not lines or not lines[-1].startswith(prefix):
            lines.append(self.next(timeout))
        return lines


def snapshot(root: Path, skip=("app.db", "app.db-wal", "app.db-shm")) -> dict:
    """Every directory and file under `root` with each file's size and hash (skipping `skip`)."""
    state = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        state[rel + "/"] = None
        for name in filenames:
            if name in skip:
                continue
            data = Path(dirpath, name).read_bytes()
            state[os.path.join(rel, name)] = (len(data), hashlib.sha256(data).hexdigest())
    return state
