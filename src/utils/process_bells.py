"""Doorbells, one per listening process and kind, that any process rings: `locks/<kind>-<pid>-<n>.bell`.

Two kinds, both hints to look at SQLite now instead of looking on a timer (issue #23: a look
on a timer costs a chat worker 0.2–0.5 ms of CPU, paid by whatever turn runs meanwhile):

- `replies`: another process stops a reply, follows it or deletes its session by leaving a
  mark on its row (`services/generations.py`); the generating process reads the marks of its
  replies. Its sync thread used to look four times a second while any reply ran. Each process
  that generates replies listens from its first reply on.
- `news`: a cortex job or a title finished (in the memory process, usually); each chat worker
  tells its sockets (`services_root._announce`). It used to look every second, also when
  nobody chatted. Each chat worker of a server with a memory process listens from its start.

A mark or a finish names a row, not the process that cares, and the processes are a handful,
so whoever rings rings every bell of the kind. The rows stay the truth: each listener still
looks now and then on its own (a reply at each of its checkpoints, the news every
`NEWS_SECONDS`), so what a process that does not ring wrote (a tool editing the database, a
process killed between its commit and its ring) is heard then. `n` tells apart two apps one
process serves from one data directory (as tests do); the bell of a process that is gone is
removed by the next process that listens for that kind.
"""
import itertools
import logging
import os
from collections.abc import Callable

from .doorbell import Doorbell

log = logging.getLogger(__name__)
SUFFIX = ".bell"
_SERIAL = itertools.count(1)


class ProcessBells:
    """`listen` in a process that wants to hear of `kind`; `ring` from any process."""

    def __init__(self, locks_dir: str, kind: str):
        self._dir = locks_dir
        self._prefix = f"{kind}-"
        self._own: Doorbell | None = None

    def listen(self, on_ring: Callable[[], object]) -> None:
        """This process's bell, answered by `on_ring()` in a thread of its own (once)."""
        if self._own is not None:
            return
        self._remove_stale()
        name = f"{self._prefix}{os.getpid()}-{next(_SERIAL)}{SUFFIX}"
        self._own = Doorbell(os.path.join(self._dir, name))
        self._own.listen(on_ring)

    def ring(self) -> None:
        """Rings every bell of the kind; returns at once, whatever happens."""
        try:
            names = os.listdir(self._dir)
        except OSError:
            return  # no locks directory: nothing listens
        for name in names:
            if name.startswith(self._prefix) and name.endswith(SUFFIX):
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
        """Removes the bells of the kind whose processes no longer run."""
        try:
            names = os.listdir(self._dir)
        except OSError:
            return
        for name in names:
            if not (name.startswith(self._prefix) and name.endswith(SUFFIX)):
                continue
            pid = name[len(self._prefix):-len(SUFFIX)].partition("-")[0]
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
