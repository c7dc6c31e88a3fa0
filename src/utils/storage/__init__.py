"""SQLite storage: one database file per data directory, a connection per thread."""
from .db import Database, connect

__all__ = ["Database", "connect"]
