"""Per-persona locks that hold across threads and processes.

A threading.RLock orders the threads of one process; `fcntl.flock` on
`<lock_dir>/<persona_id>.lock` orders processes. The flock is taken when a thread first enters
and released when it leaves its outermost `with`, so the lock is re-entrant within a thread.
The kernel drops a flock when its holder dies, so a killed writer never leaves the persona locked.
A flock another process holds is waited for in a pool thread under gevent (`cooperative`), so
the wait does not stall the worker's other connections.
A lock file is deleted only with its persona (`remove_file`, while held): a process that then
locks the old inode or a new file finds the persona gone and touches nothing.
"""
import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..cooperative import blocking


class _Entry:
    def __init__(self) -> None:
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


class PersonaLocks:
    """Hands out the lock of each persona; `persona_id` must already be validated."""

    def __init__(self, lock_dir: str) -> None:
        self.lock_dir = lock_dir
        self._entries: dict[str, _Entry] = {}
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, persona_id: str) -> Iterator[None]:
        """Holds the persona's lock for the `with` block (blocks until it is free)."""
        entry = self._entry(persona_id)
        with entry.rlock:
            if entry.depth == 0:
                entry.fd = self._acquire_file_lock(persona_id)
            entry.depth += 1
            try:
                yield
            finally:
                entry.depth -= 1
                if entry.depth == 0:
                    fd, entry.fd = entry.fd, None
                    assert fd is not None  # taken when depth went from 0 to 1
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)

    def remove_file(self, persona_id: str) -> None:
        """Deletes the persona's lock file; call it holding the lock, after the persona is gone."""
        try:
            os.unlink(os.path.join(self.lock_dir, f"{persona_id}.lock"))
        except FileNotFoundError:
            pass

    def _entry(self, persona_id: str) -> _Entry:
        with self._guard:
            entry = self._entries.get(persona_id)
            if entry is None:
                entry = self._entries[persona_id] = _Entry()
            return entry

    def _acquire_file_lock(self, persona_id: str) -> int:
        os.makedirs(self.lock_dir, exist_ok=True)
        fd = os.open(os.path.join(self.lock_dir, f"{persona_id}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                blocking(fcntl.flock, fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            os.close(fd)
            raise
        return fd
