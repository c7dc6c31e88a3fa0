"""Holding a persona's cortex lock from a test, and seeing who waits for it (Linux /proc/locks).

A test that holds the lock and waits until the kernel lists a blocked `flock` on the same file
knows, without sleeping or patching anything, that a request has passed every check before the
lock and is now waiting for it.
"""
import fcntl
import os
import time
from contextlib import contextmanager

DEADLINE = 20.0


def lock_path(data_dir, persona_id: str) -> str:
    """Where the app keeps the persona's lock file."""
    return os.path.join(os.path.realpath(data_dir), "cortex", ".locks", f"{persona_id}.lock")


@contextmanager
def held(path: str):
    """Holds an exclusive flock on `path` (a separate open file, so it excludes the app too)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)


def waiters(inode: int) -> int:
    """How many flock requests on the file with `inode` are blocked right now."""
    count = 0
    with open("/proc/locks", encoding="ascii") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) > 6 and fields[1] == "->" and fields[2] == "FLOCK" \
                    and int(fields[6].rsplit(":", 1)[1]) == inode:
                count += 1
    return count


def wait_for_waiters(inode: int, count: int = 1, timeout: float = DEADLINE) -> None:
    """Returns once at least `count` flock requests on `inode` are blocked; fails at a deadline."""
    deadline = time.monotonic() + timeout
    while waiters(inode) < count:
        assert time.monotonic() < deadline, "nobody came to wait for the lock"
        time.sleep(0.002)


def wait_until(condition, timeout: float = DEADLINE, what: str = "the condition") -> None:
    """Polls `condition()` until it is true; fails at a deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)
