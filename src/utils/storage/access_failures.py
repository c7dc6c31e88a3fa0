"""Failed sign-in attempts (table `access_failures`), shared by every worker process."""
import sqlite3


def nth_newest_since(conn: sqlite3.Connection, cutoff: float, n: int,
                     client: str | None = None) -> float | None:
    """The time of the `n`-th newest failure after `cutoff` (of `client`, or of anyone), or
    None when there were fewer."""
    if client is None:
        row = conn.execute("SELECT at FROM access_failures WHERE at > ? "
                           "ORDER BY at DESC LIMIT 1 OFFSET ?", (cutoff, n - 1)).fetchone()
    else:
        row = conn.execute("SELECT at FROM access_failures WHERE client = ? AND at > ? "
                           "ORDER BY at DESC LIMIT 1 OFFSET ?", (client, cutoff, n - 1)).fetchone()
    return row[0] if row is not None else None


def add_failure(conn: sqlite3.Connection, client: str, at: float, forget_before: float) -> None:
    """Counts one failure of `client` and forgets those at or before `forget_before` (inside
    the caller's transaction)."""
    conn.execute("INSERT INTO access_failures (client, at) VALUES (?, ?)", (client, at))
    conn.execute("DELETE FROM access_failures WHERE at <= ?", (forget_before,))
