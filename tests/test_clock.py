"""Stored timestamps: the one format SQLite's own `strftime` writes, so both sort as strings."""
import re
import sqlite3
from contextlib import closing

from src.utils.storage.clock import utc_now

SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def test_utc_now_has_sqlites_shape_and_sorts_with_it():
    with closing(sqlite3.connect(":memory:")) as conn:
        for _ in range(200):
            before = utc_now()
            (stored,) = conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')").fetchone()
            after = utc_now()
            assert SHAPE.fullmatch(before) and SHAPE.fullmatch(after), (before, after)
            assert before <= stored <= after
