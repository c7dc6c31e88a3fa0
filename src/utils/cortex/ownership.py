"""Which process owns a running job, in a way pid reuse and zombies cannot fool.

Each app (normally one per worker process) takes a random token and holds an exclusive `flock`
on `DATA_DIR/locks/owners/<token>.lock` for as long as it lives. The kernel releases a flock
when the last descriptor of it closes, i.e. when the process exits, before it becomes a zombie
and whether or not anyone reaps it; a new process that happens to get the same pid has another
token. So "the owner is alive" is "its lock file is still locked". The file is created under a
temporary name, locked, then renamed into place, so no checker ever sees it unlocked while its
owner lives. A checker that finds a lock free removes the file (dead owners leave no litter).
"""
import fcntl
import os
import re
import uuid
from typing import Self

_TOKEN = re.compile(r"[0-9a-f]{32}", re.ASCII)
_SUFFIX = ".lock"


def owners_dir(data_dir: str) -> str:
    """Where the owner lock files of a data directory live."""
    return os.path.join(data_dir, "locks", "owners")


class ProcessOwner:
    """This app's identity as a job owner; alive from `open()` (at start-up) until `close()`.

    Creating one only draws the token: the app's services are built before anything starts
    (docs/development.md#composition-root-build-then-start).
    """

    def __init__(self, data_dir: str):
        self.directory = owners_dir(data_dir)
        self.token = uuid.uuid4().hex
        self._fd = -1

    def open(self) -> Self:
        """Takes the lock that makes this owner alive (once)."""
        if self._fd >= 0:
            return self
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        temp = os.path.join(self.directory, f".{self.token}.tmp")
        self._fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(temp, self.path)
        return self

    @property
    def path(self) -> str:
        """The lock file this owner holds."""
        return os.path.join(self.directory, self.token + _SUFFIX)

    def is_alive(self, token: str | None) -> bool:
        """True if the owner with `token` (this one or another process's) still lives."""
        if token == self.token and self._fd >= 0:
            return True
        return owner_alive(self.directory, token)

    def sweep(self) -> int:
        """Removes the lock files of owners that are gone; returns how many."""
        names = [n[:-len(_SUFFIX)] for n in os.listdir(self.directory) if n.endswith(_SUFFIX)]
        return sum(1 for token in names if not owner_alive(self.directory, token))

    def close(self) -> None:
        """Gives up ownership (clean shutdown): the file goes, then the lock."""
        if self._fd < 0:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = -1


def owner_alive(directory: str, token: str | None) -> bool:
    """True while the process holding `<directory>/<token>.lock` lives; removes a dead one's file."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return False
    path = os.path.join(directory, token + _SUFFIX)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return False
    finally:
        os.close(fd)
