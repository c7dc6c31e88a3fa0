"""A doorbell between processes: a chat worker rings it when it queues work for the memory process.

The memory process claims the cortex jobs and titles the chat workers queue in SQLite. Without
a ring it had to look for them, several times a second, also when nobody chats (issue #23).
The bell is a FIFO in the data directory (owner-only, like the directory): ringing opens it
without blocking, writes one byte and closes it, and never fails the caller (nobody listening,
a full pipe: the listener's next look finds the work anyway). The listener opens it for
reading and writing, so it never sees an end of file, and drains it on each ring. A ring is
only a hint, sent after the row is committed: the rows stay the truth, and the memory process
still looks now and then for what a ring cannot tell it (work queued while it was restarting
is found by its start-up pass).
"""
import logging
import os
import select
import stat
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)
JOIN_SECONDS = 5.0


class Doorbell:
    """`ring()` from any process; `listen(on_ring)` in the one process that answers."""

    def __init__(self, path: str):
        self.path = path
        self._fifo: int | None = None
        self._stop_r: int | None = None
        self._stop_w: int | None = None
        self._thread: threading.Thread | None = None

    def ring(self) -> None:
        """Tells the listener there is work; returns at once, whatever happens."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return  # no bell yet (ENOENT) or nobody listening (ENXIO)
        try:
            os.write(fd, b"!")
        except OSError:
            pass  # full: rings are already waiting to be heard
        finally:
            os.close(fd)

    def listen(self, on_ring: Callable[[], object]) -> None:
        """Creates the bell if needed and calls `on_ring()` in a thread of its own after each
        ring (rings that pile up while it runs are heard as one)."""
        if self._thread is not None:
            return
        self._make_fifo()
        self._fifo = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._answer, args=(on_ring,), name="doorbell",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops listening and closes the descriptors."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        assert self._stop_w is not None
        os.write(self._stop_w, b"x")
        thread.join(JOIN_SECONDS)
        for fd in (self._fifo, self._stop_r, self._stop_w):
            if fd is not None:
                os.close(fd)
        self._fifo = self._stop_r = self._stop_w = None

    def _make_fifo(self) -> None:
        try:
            if stat.S_ISFIFO(os.stat(self.path).st_mode):
                return
            os.unlink(self.path)  # something else has its name: make it a bell
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        os.mkfifo(self.path, 0o600)

    def _answer(self, on_ring: Callable[[], object]) -> None:
        assert self._fifo is not None and self._stop_r is not None
        while True:
            ready, _, _ = select.select([self._fifo, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                while os.read(self._fifo, 4096):
                    pass
            except BlockingIOError:
                pass
            try:
                on_ring()
            except Exception:
                log.exception("Answering the doorbell failed")
