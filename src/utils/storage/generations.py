"""What a chat turn reads but rarely changes, kept per process while its change counter stands.

Every turn read the settings, the persona, its user persona, its world books and the newest
cortex revision ids again (issue #23), because any process may change them. The table
`generations` (migration 0047) holds two counters that SQLite triggers raise in the writer's
own transaction: `config` on every insert, update and delete of a configuration table
(`CONFIG_TABLES`), `cortex` on every change of `cortex_revisions`. A turn reads that one row
(`read`) first and takes what it needs from a `ConfigCache` filled under that counter; a write
anywhere, by any process or path, raises the counter and the next turn reads the rows again.

The counter must be read before the rows it keys: rows read after it are at least as new as
it, so a counter that has not moved since means they have not either (rows read before it
could be older than what it counts, and would then be kept as current).
"""
import sqlite3
import threading
from collections.abc import Callable, Hashable
from typing import NamedTuple, TypeVar

T = TypeVar("T")
CONFIG_TABLES = ("settings", "personas", "persona_avatars", "user_personas",
                 "user_persona_avatars", "world_books", "world_entries", "persona_world_books")
CORTEX_TABLES = ("cortex_revisions",)
MAX_ENTRIES = 1024
GENERATIONS = "SELECT config, cortex FROM generations WHERE id = 1"


class Generations(NamedTuple):
    """The two change counters as one statement read them."""

    config: int
    cortex: int


def read(conn: sqlite3.Connection) -> Generations:
    """The counters now (one statement on a one-row table)."""
    row = conn.execute(GENERATIONS).fetchone()
    return Generations(row[0], row[1])


class ConfigCache:
    """One process's parsed configuration rows, for the newest `config` counter it has seen.

    Entries are shared between the turns of the process: the values must not be changed by
    those who read them. A counter lower than the newest seen (a turn that read it just before
    a write) is served by reading the rows, and nothing is kept for it."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self._max = max_entries
        self._lock = threading.Lock()
        self._generation = -1
        self._values: dict[Hashable, object] = {}

    def get(self, generation: int, key: Hashable, load: Callable[[], T]) -> T:
        """The value kept for `key` under `generation`, else `load()` (which must read the
        rows after `generation` was read), kept while `generation` is the newest."""
        with self._lock:
            if generation == self._generation and key in self._values:
                return self._values[key]  # type: ignore[return-value]
        value = load()
        with self._lock:
            if generation > self._generation:
                self._generation, self._values = generation, {}
            if generation == self._generation:
                if len(self._values) >= self._max:
                    self._values.clear()
                self._values[key] = value
        return value
