"""Which revision each cortex file on disk holds, so an unchanged file is not read and hashed again.

A file counts as unchanged while its device, inode, size, mtime and ctime (nanoseconds) are the
ones remembered and its newest revision row (committed or pending) is still the remembered one.
The ctime cannot be set from user space, so an edit that keeps the size and restores the mtime
still changes it; an atomic replace changes the inode. Timestamps only advance once per clock
tick, so a file changed less than `RACY_SECONDS` before it was looked at is not remembered: a
second edit within that tick could leave every field as it was (git's "racily clean" entries).
`KeptFile` applies the same rule to what one other file (`secrets.json`) parses into.
"""
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
RACY_SECONDS = 2.0
Signature = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


def signature(st: os.stat_result) -> Signature:
    """What must stay equal for a file to count as unchanged."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result, now_ns: int) -> bool:
    """Whether the file last changed at least `RACY_SECONDS` before `now_ns`, so any later
    change shows in its signature (a younger file's could leave the signature as it was)."""
    return now_ns - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_SECONDS * 1e9


def read_with_stat(path: str) -> tuple[bytes | None, os.stat_result | None]:
    """The file's bytes and its stat taken before reading (so an edit during the read changes
    the stat), or (None, None) if it does not exist (other I/O errors propagate)."""
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            return handle.read(), st
    except FileNotFoundError:
        return None, None


class FileSnapshots:
    """One process's memory of (signature, revision row) per (persona, filename)."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._entries: dict[tuple[str, str], tuple[Signature, sqlite3.Row]] = {}

    def lookup(self, key: tuple[str, str], st: os.stat_result) -> sqlite3.Row | None:
        """The remembered row if the file still has the signature it had then, else None."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] == signature(st):
            return entry[1]
        return None

    def remember(self, key: tuple[str, str], st: os.stat_result, row: sqlite3.Row) -> None:
        """Remembers that the file with stat `st` holds `row` (not if it changed too recently)."""
        if not settled(st, self._clock()):
            self._entries.pop(key, None)
            return
        self._entries[key] = (signature(st), row)

    def forget(self, persona_id: str) -> None:
        """Drops everything remembered about one persona's files."""
        for key in [key for key in self._entries if key[0] == persona_id]:
            self._entries.pop(key, None)


class KeptFile(Generic[T]):
    """What one file's content was made into, kept while the file keeps the signature it had
    when it was read: a `stat` per use instead of a read and a parse. A file read within
    `RACY_SECONDS` of its last change is not kept, so it is read again on every use."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._kept: tuple[Signature, T] | None = None

    def lookup(self, st: os.stat_result) -> T | None:
        """What was kept if the file still has the signature it had then, else None."""
        kept = self._kept
        return kept[1] if kept is not None and kept[0] == signature(st) else None

    def remember(self, st: os.stat_result, value: T) -> None:
        """Keeps `value`, made of the file read with stat `st` (not if it changed too recently)."""
        self._kept = (signature(st), value) if settled(st, self._clock()) else None
