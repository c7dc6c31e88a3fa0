"""Timestamps as stored in SQLite: ISO-8601 UTC with milliseconds and a trailing 'Z'.

The format matches SQLite's `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`, so values written from
Python and from SQL sort and compare as plain strings.
"""
from datetime import UTC, datetime


def utc_now() -> str:
    """The current time, e.g. `2025-01-31T12:00:00.123Z` (`isoformat` rather than
    `strftime`: a chat turn takes several, and it costs half as much)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
