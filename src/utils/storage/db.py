"""SQLite access. Migrations are the numbered `.sql` files in `migrations/`, applied in order once.

Write transactions of one process queue on a lock shared by its connections: SQLite's own busy
handler makes a writer that finds the database locked sleep (1, 2, 5, 10 ms…), which is dead time
when the holder is a thread of the same process; the lock hands over the moment the holder
commits. Other processes still meet each other in SQLite's busy timeout; under gevent, where a
busy handler sleeping in C would stall every connection of the worker (and never let a greenlet
of the same process commit), a connection instead retries a statement that found the database
locked after a cooperative pause, up to the same timeout.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ..cooperative import patched, pause

log = logging.getLogger(__name__)
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT = 30.0


class Connection(sqlite3.Connection):
    """A connection carrying the write lock it shares with the other connections of its process."""

    write_lock: threading.RLock
    cooperative = False

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        """`sqlite3.Connection.execute`, retried cooperatively while the database is locked."""
        if not self.cooperative:
            return super().execute(sql, parameters)
        return _retry_busy(super().execute, sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        """`sqlite3.Connection.executemany`, retried the same way."""
        if not self.cooperative:
            return super().executemany(sql, parameters)
        return _retry_busy(super().executemany, sql, list(parameters))


_PAUSES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)


def _retry_busy(run: Callable[[str, Any], sqlite3.Cursor], sql: str,
                parameters: Any) -> sqlite3.Cursor:
    """A statement that met SQLITE_BUSY did nothing, so it is run again after a pause, for up
    to BUSY_TIMEOUT from the first lock it met (the clock is read only then)."""
    deadline: float | None = None
    attempt = 0
    while True:
        try:
            return run(sql, parameters)
        except sqlite3.OperationalError as err:
            if "locked" not in str(err):
                raise
            now = time.monotonic()
            deadline = now + BUSY_TIMEOUT if deadline is None else deadline
            if now > deadline:
                raise
        pause(_PAUSES[min(attempt, len(_PAUSES) - 1)])
        attempt += 1


def connect(path: str, write_lock: threading.RLock | None = None) -> sqlite3.Connection:
    """Opens `path` in WAL mode with foreign keys on and a generous busy timeout."""
    cooperative = patched()
    conn = sqlite3.connect(path, timeout=0 if cooperative else BUSY_TIMEOUT,
                           isolation_level=None, check_same_thread=False, factory=Connection)
    conn.cooperative = cooperative
    conn.write_lock = write_lock or threading.RLock()
    conn.row_factory = sqlite3.Row
    conn.text_factory = _decode_text
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA secure_delete=ON")  # deleted memories do not linger in free pages
    if not cooperative:
        conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _decode_text(raw: bytes) -> str:
    """TEXT as UTF-8; bytes another tool stored that are not UTF-8 read as U+FFFD, not a crash."""
    return raw.decode("utf-8", "replace")


def plain_rows(cursor: sqlite3.Cursor, sql: str, parameters: Any) -> list[tuple]:
    """`cursor`'s rows of `sql` with TEXT decoded by sqlite3 itself, not `_decode_text`: a
    Python call per value is most of the cost of a chat turn's history (issue #23). Bytes
    that are not UTF-8 make that decoder refuse the query (OperationalError); it is then read
    again the forgiving way. The cursor's connection is this thread's alone, so the factory
    switched for the query is seen by no one else."""
    conn = cursor.connection
    conn.text_factory = str
    try:
        return cursor.execute(sql, parameters).fetchall()
    except sqlite3.OperationalError as err:
        if "decode" not in str(err):
            raise
    finally:
        conn.text_factory = _decode_text
    return cursor.execute(sql, parameters).fetchall()


@contextmanager
def transaction(conn: sqlite3.Connection, immediate: bool = True
                ) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any exception (connections run in autocommit).

    Inside a transaction the caller already opened, it joins that one instead.
    """
    if conn.in_transaction:
        yield conn
        return
    with _write_lock(conn):
        conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


@contextmanager
def savepoint(conn: sqlite3.Connection, name: str) -> Iterator[sqlite3.Connection]:
    """A write that may fail on its own: inside the caller's transaction a SAVEPOINT, so a
    failure undoes only this part and the caller's writes still commit; else a transaction."""
    if not conn.in_transaction:
        with transaction(conn):
            yield conn
        return
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


@contextmanager
def _write_lock(conn: sqlite3.Connection) -> Iterator[None]:
    """Holds the write lock `conn` shares with its process's other connections, if it has one."""
    lock = getattr(conn, "write_lock", None)
    if lock is None:
        yield
        return
    if not lock.acquire(timeout=BUSY_TIMEOUT):
        raise sqlite3.OperationalError("database is locked (by another thread of this process)")
    try:
        yield
    finally:
        lock.release()


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Applies every migration not yet recorded; returns the names applied now."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                 "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
    applied = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        with transaction(conn):
            done = conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?",
                                (path.stem,)).fetchone()
            if done:
                continue
            for statement in _statements(path.read_text(encoding="utf-8")):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (path.stem,))
            applied.append(path.stem)
    if applied:
        log.info("Applied migrations: %s", ", ".join(applied))
    return applied


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """The names of the migrations recorded in the database, sorted."""
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def intact(conn: sqlite3.Connection) -> bool:
    """True when SQLite's integrity check finds nothing wrong with the database."""
    return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _statements(sql: str) -> list[str]:
    """Splits a migration file into complete statements, dropping `--` comment lines."""
    statements, pending = [], ""
    for line in sql.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement in migration: {pending.strip()[:80]}")
    return statements


def _owner_only(path: str) -> None:
    """Creates the database file 0600 (SQLite gives its -wal and -shm files the same mode) and
    tightens an existing one and its companions. An existing file is never opened here: closing
    any descriptor of it would drop the POSIX locks SQLite holds on it in this process."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        pass
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)
        except FileNotFoundError:
            continue


class Database:
    """The app's database file: migrated once at start-up, one connection per thread.

    Creating the object touches nothing on disk (the app's services are built before anything
    starts, docs/development.md#composition-root-build-then-start); `open()` creates the file
    owner-only and migrates it, at start-up or else before the first connection.

    A thread (under gevent: a greenlet, of which there is one per connection) that is done with
    its connection hands it back (`close_thread`: a reply's thread, a WebSocket frame, and the
    server after each request, `src/server.py`); the next thread takes it instead of opening
    one, so memory grows with the connections in use, not with the connections ever opened.
    """

    HELD = 32  # replies that may each hold one while they stream (`crowded`)
    IDLE = 64  # kept for the next burst: reopening one costs its statements' compilation

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()
        self._idle: list[sqlite3.Connection] = []
        self._idle_lock = threading.Lock()
        self._in_use = 0  # connections held by threads now
        self._write_lock = threading.RLock()
        self._open_lock = threading.Lock()
        self._opened = False

    def open(self) -> None:
        """Creates the file (0600) and applies the migrations not yet applied; once."""
        with self._open_lock:
            if self._opened:
                return
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            _owner_only(self.path)
            with_conn = connect(self.path)
            try:
                migrate(with_conn)
            finally:
                with_conn.close()
            self._opened = True

    def conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if not self._opened:
                self.open()
            with self._idle_lock:
                conn = self._idle.pop() if self._idle else None
                self._in_use += 1
            conn = self._local.conn = conn or connect(self.path, self._write_lock)
        return conn

    def crowded(self) -> bool:
        """True when more than `HELD` connections are in use: a thread that will not need its
        connection for a while should then hand it back (`close_thread`), so memory stays
        bounded by the connections in use, not by the work in flight."""
        with self._idle_lock:
            return self._in_use > self.HELD

    def close_thread(self) -> None:
        """Gives up this thread's connection (short-lived threads call it when they end): kept
        for the next thread, or closed when `IDLE` are idle or it is inside a transaction.

        `IDLE` is above `HELD`: a burst has more in use than its replies hold (the socket
        frames and the replies' prompts and final writes around them), and a connection closed
        when the burst ends is opened again by the next, at about 1.5 ms (its PRAGMAs, the
        schema and every statement of a turn compiled again); idle ones keep little memory
        once `shrink_idle` has freed their page caches (issue #23)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._idle_lock:
            self._in_use -= 1
            if not conn.in_transaction and len(self._idle) < self.IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def shrink_idle(self) -> None:
        """Frees the page caches of the idle connections (after a burst, each kept up to 2 MiB
        of pages it read; the next user reads what it needs again)."""
        with self._idle_lock:  # held: a connection taken meanwhile would be used by two threads
            for conn in self._idle:
                conn.execute("PRAGMA shrink_memory")

    def close(self) -> None:
        """Closes the idle connections and this thread's (shutdown: an app kept alive by a
        reference, as tests' tools keep theirs, then holds no file descriptors). A later
        `conn()` opens a new one."""
        self.close_thread()
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def transaction(self, immediate: bool = True
                    ) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction on this thread's connection."""
        return transaction(self.conn(), immediate)
