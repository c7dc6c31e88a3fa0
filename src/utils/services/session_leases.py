"""One reply at a time per session, across the threads and the worker processes of one data dir.

Each session maps to one byte of `DATA_DIR/locks/sessions.lock` (at an offset from a hash of its
id) and a reply holds a POSIX record lock on that byte. The kernel drops the lock if the process
dies, so a crashed worker never leaves a session busy. Record locks belong to the process, so a
set of claimed ids orders the threads of this process, and the file stays open for the life of
the process (closing any descriptor of it would drop every lock the process holds).
"""
import fcntl
import hashlib
import os
import threading

_OFFSET_BITS = 62


class SessionLeases:
    """Claims and releases the right to stream a reply into a session."""

    def __init__(self, data_dir: str):
        self._lock_dir = os.path.join(data_dir, "locks")
        self._fd = -1
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def open(self) -> None:
        """Opens the lock file (at start-up, else at the first claim); creating the object
        touches nothing on disk."""
        with self._lock:
            self._descriptor()

    def _descriptor(self) -> int:
        """The lock file's descriptor, opened on first use (call with `_lock` held)."""
        if self._fd < 0:
            os.makedirs(self._lock_dir, exist_ok=True)
            self._fd = os.open(os.path.join(self._lock_dir, "sessions.lock"),
                               os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._fd

    def claim(self, session_id: str) -> bool:
        """True if this caller may stream into the session now (release it afterwards)."""
        with self._lock:
            if session_id in self._held or not self._lock_byte(session_id):
                return False
            self._held.add(session_id)
            return True

    def release(self, session_id: str) -> None:
        """Frees a session claimed with `claim`."""
        with self._lock:
            if session_id in self._held:
                self._held.discard(session_id)
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _offset(session_id))

    def is_busy(self, session_id: str) -> bool:
        """True while a reply streams into the session, in this process or another."""
        with self._lock:
            if session_id in self._held:
                return True
            if not self._lock_byte(session_id):
                return True
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _offset(session_id))
            return False

    def close(self) -> None:
        """Closes the lock file (dropping every lease this process holds)."""
        with self._lock:
            self._held.clear()
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _lock_byte(self, session_id: str) -> bool:
        try:
            fcntl.lockf(self._descriptor(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1,
                        _offset(session_id))
        except (BlockingIOError, PermissionError):
            return False
        return True


def _offset(session_id: str) -> int:
    digest = hashlib.sha256(session_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _OFFSET_BITS)
