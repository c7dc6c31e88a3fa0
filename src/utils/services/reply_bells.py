"""The doorbells of the processes that generate replies, rung when a mark is left on a reply's row.

Another process stops a reply, follows it or deletes its session by leaving a mark on its row
(`generations.py`): the generating process reads the marks of its replies. Without a ring it
had to look four times a second while any reply ran, in every chat worker, about 0.25 ms of CPU
a look (issue #23). Each generating process now listens on a bell of its own,
`DATA_DIR/locks/replies-<pid>-<n>.bell` (a `Doorbell`; `n` tells apart two apps one process
serves from one data directory, as tests do), made when it starts its first reply, and
whoever leaves a mark rings every such bell (a mark names the reply, not its process; the
processes are a handful and marks are rare). The rows stay the truth: a ring is a hint to look
now, and the generating process still looks at each checkpoint of its replies (at most
`CHECKPOINT_SECONDS` apart), so a mark left by anything that does not ring is heard then.
A bell whose process is gone is removed by the next process that starts listening.
"""
import itertools
import logging
import os
from collections.abc import Callable

from ..doorbell import Doorbell

log = logging.getLogger(__name__)
PREFIX, SUFFIX = "replies-", ".bell"
_SERIAL = itertools.count(1)


class ReplyBells:
    """`listen` in a process that generates replies; `ring` from any process."""

    def __init__(self, locks_dir: str):
        self._dir = locks_dir
        self._own: Doorbell | None = None

    def listen(self, on_ring: Callable[[], object]) -> None:
        """This process's bell, answered by `on_ring()` in a thread of its own (once)."""
        if self._own is not None:
            return
        self._remove_stale()
        name = f"{PREFIX}{os.getpid()}-{next(_SERIAL)}{SUFFIX}"
        self._own = Doorbell(os.path.join(self._dir, name))
        self._own.listen(on_ring)

    def ring(self) -> None:
        """Rings every generating process's bell; returns at once, whatever happens."""
        try:
            names = os.listdir(self._dir)
        except OSError:
            return  # no locks directory: nothing listens
        for name in names:
            if name.startswith(PREFIX) and name.endswith(SUFFIX):
                Doorbell(os.path.join(self._dir, name)).ring()

    def close(self) -> None:
        """Stops listening and removes this process's bell."""
        own, self._own = self._own, None
        if own is None:
            return
        own.close()
        try:
            os.unlink(own.path)
        except OSError:
            pass

    def _remove_stale(self) -> None:
        """Removes the bells of processes that no longer run."""
        try:
            names = os.listdir(self._dir)
        except OSError:
            return
        for name in names:
            if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
                continue
            pid = name[len(PREFIX):-len(SUFFIX)].partition("-")[0]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                try:
                    os.unlink(os.path.join(self._dir, name))
                except OSError:
                    pass
            except OSError:
                continue  # another user's process: alive
