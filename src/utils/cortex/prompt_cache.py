"""The cortex text of each persona's last prompt, reused while nothing about it changed.

Building a chat prompt reads the three files under the persona's lock, reconciles each with its
revision rows and counts its version: a lock, a directory listing and about ten queries per
turn (issue #23). Between two turns the files rarely change, so the texts and revision ids read
last time are kept per persona with what they depended on: each file's stat signature (device,
inode, size, mtime, ctime: see `snapshots.py`) and the newest revision row id of each file,
taken under the same lock as the read. The next prompt compares three `stat` calls and the
newest ids with that; any difference (a revision landed through the app or another process,
the file was edited on disk, a pending row appeared) reads the files the regular way, under
the lock. Files changed within `RACY_SECONDS` of the read are not remembered (a second edit
in the same clock tick could leave every field as it was).

The newest ids themselves are queried only when the `cortex` change counter (raised by a
trigger on every change of `cortex_revisions`, `storage/generations.py`) moved since they were
last queried for the persona; the caller reads the counter before anything else of the turn.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from ..storage.cortex_revisions import newest_ids
from .paths import CORTEX_FILES
from .snapshots import RACY_SECONDS, Signature, signature

MAX_PERSONAS = 256
Texts = list[tuple[str, str, int]]  # (filename, content, revision id)
Depends = tuple[tuple[Signature, ...], tuple[int | None, ...]]  # the files' stats, newest ids
Key = tuple[tuple[Signature, ...], tuple[int | None, ...], int]  # and the latest change (ns)


class PromptTexts:
    """One process's last-read cortex texts per persona, with what they depended on."""

    def __init__(self, clock: Callable[[], int] = time.time_ns):
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[Depends, Texts]] = OrderedDict()
        self._newest: OrderedDict[str, tuple[int, tuple[int | None, ...]]] = OrderedDict()

    def key(self, conn: sqlite3.Connection, directory: str, persona_id: str,
            generation: int | None = None) -> Key | None:
        """What the texts depend on now; None when a file is missing. `generation`: the
        `cortex` counter, read before this call (None: the newest ids are queried)."""
        stats = []
        for name in CORTEX_FILES:
            try:
                stats.append(os.stat(os.path.join(directory, name)))
            except FileNotFoundError:
                return None
        return tuple(signature(st) for st in stats), \
            self._newest_ids(conn, persona_id, generation), \
            max(max(st.st_mtime_ns, st.st_ctime_ns) for st in stats)

    def _newest_ids(self, conn: sqlite3.Connection, persona_id: str,
                    generation: int | None) -> tuple[int | None, ...]:
        """The persona's newest revision ids, queried unless they were under `generation`."""
        if generation is not None:
            with self._lock:
                known = self._newest.get(persona_id)
                if known is not None and known[0] == generation:
                    return known[1]
        ids = newest_ids(conn, persona_id, CORTEX_FILES)
        if generation is not None:
            with self._lock:
                self._newest[persona_id] = (generation, ids)
                self._newest.move_to_end(persona_id)
                while len(self._newest) > MAX_PERSONAS:
                    self._newest.popitem(last=False)
        return ids

    def lookup(self, persona_id: str, key: Key | None) -> Texts | None:
        """The remembered texts if `key` is what they were read under."""
        if key is None:
            return None
        with self._lock:
            entry = self._entries.get(persona_id)
            if entry is None or entry[0] != key[:2]:
                return None
            self._entries.move_to_end(persona_id)
            return entry[1]

    def remember(self, persona_id: str, key: Key | None, texts: Texts) -> None:
        """Keeps `texts`, read under `key` (not if a file changed too recently)."""
        with self._lock:
            if key is None or self._clock() - key[2] < RACY_SECONDS * 1e9:
                self._entries.pop(persona_id, None)
                return
            self._entries[persona_id] = (key[:2], texts)
            self._entries.move_to_end(persona_id)
            while len(self._entries) > MAX_PERSONAS:
                self._entries.popitem(last=False)
