"""Which gunicorn worker holds which connection, and which accepts, read from `/proc` (Linux).

A WebSocket stays with the worker that accepted it, so how a burst over open sockets is shared
between the workers is how their connections fell. Used by the chat bench
(`bench/bench_procs.py`) and the balancing tests (`tests/robustness/test_worker_balance.py`).
"""
import os
from pathlib import Path

ESTABLISHED, LISTEN = "01", "0A"  # TCP states as /proc/net/tcp writes them


def worker_pids(pid: int) -> list[int]:
    """The child processes of gunicorn master `pid` (its workers, and the memory process)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def connections_per_worker(master: int, port: int) -> dict[int, int]:
    """Established TCP connections to `port` held by each gunicorn worker of `master` (not the
    memory process), by worker pid."""
    inodes = _inodes(port, ESTABLISHED)
    counts = {}
    for worker, links in _workers_files(master):
        counts[worker] = sum(link[8:-1] in inodes for link in links.values()
                             if link.startswith("socket:["))
    return counts


def accepting_workers(master: int, port: int) -> set[int]:
    """The workers of `master` whose event loop watches the listener on `port` (their epoll
    lists its inode): they have booted and accept. A test waits for this before it counts."""
    listeners = {format(int(inode), "x") for inode in _inodes(port, LISTEN)}
    found = set()
    for worker, links in _workers_files(master):
        for fd, link in links.items():
            if link != "anon_inode:[eventpoll]":
                continue
            try:
                info = Path(f"/proc/{worker}/fdinfo/{fd}").read_text()
            except FileNotFoundError:
                continue
            watched = {part[4:] for part in info.split() if part.startswith("ino:")}
            if watched & listeners:
                found.add(worker)
    return found


def _workers_files(master: int) -> list[tuple[int, dict[str, str]]]:
    """Each gunicorn worker of `master` (not the memory process) with its open files (file
    descriptor: what it points to)."""
    found = []
    for worker in worker_pids(master):
        try:
            if b"src.memory_process" in Path(f"/proc/{worker}/cmdline").read_bytes():
                continue
            fds = os.listdir(f"/proc/{worker}/fd")
            found.append((worker, {fd: _link(f"/proc/{worker}/fd/{fd}") for fd in fds}))
        except (FileNotFoundError, PermissionError):  # a worker that just ended
            continue
    return found


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except FileNotFoundError:  # closed meanwhile
        return ""


def _inodes(port: int, state: str) -> set[str]:
    """Socket inodes of the TCP sockets in `state` whose local port is `port`."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                found.add(fields[9])
    return found
