"""Whole-app backups: one zip with a consistent SQLite snapshot, the cortex files and a manifest.

The snapshot comes from SQLite's online backup API, so the app may keep running. The cortex files
in the zip are not copied from disk (a file could change between the snapshot and the copy):
each is the newest committed revision recorded in the snapshot itself, so every file in a backup
equals a revision of that backup, by construction. Callers refresh the cortex first (which
records any change made on disk outside the app), so nothing on disk is missed.

The manifest lists every entry with its size and sha256, the schema (applied migrations), the
app version and the time. `secrets.json` (the API key) is included only when asked.
"""
import hashlib
import json
import os
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from typing import BinaryIO

from ..cortex.paths import CORTEX_FILES, CortexPaths
from ..storage.cortex_revisions import latest_content
from ..storage.db import MIGRATIONS_DIR, applied_migrations
from ..storage.personas import persona_ids

FORMAT = "persona-cortex-backup"
FORMAT_VERSION = 1
APP_VERSION = "1.0.0"
MANIFEST = "manifest.json"
DATABASE = "app.db"
SECRETS = "secrets.json"


def known_migrations() -> list[str]:
    """The migrations this version of the app knows, in order."""
    return sorted(path.stem for path in MIGRATIONS_DIR.glob("*.sql"))


def schema_number(migrations: list[str]) -> int:
    """The schema version: the number of the newest migration (e.g. 10 for 0010_…)."""
    return max((int(name[:4]) for name in migrations if name[:4].isdigit()), default=0)


def write_backup(data_dir: str, target: BinaryIO, *, include_secrets: bool = False) -> dict:
    """Writes the backup zip into the open binary file `target`; returns the manifest."""
    with tempfile.TemporaryDirectory(prefix="persona-backup-") as work:
        snapshot = os.path.join(work, DATABASE)
        _snapshot(os.path.join(data_dir, DATABASE), snapshot)
        entries = {DATABASE: _file_digest(snapshot)}
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(snapshot, DATABASE)
            with closing(sqlite3.connect(snapshot)) as conn:
                migrations = applied_migrations(conn)
                for path, content in _cortex_entries(conn, data_dir):
                    archive.writestr(path, content)
                    entries[path] = _digest(content)
            secrets = os.path.join(data_dir, SECRETS)
            if include_secrets and os.path.isfile(secrets):
                with open(secrets, "rb") as handle:
                    content = handle.read()
                archive.writestr(SECRETS, content)
                entries[SECRETS] = _digest(content)
            manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                        "app_version": APP_VERSION, "schema_version": schema_number(migrations),
                        "migrations": migrations, "include_secrets": SECRETS in entries,
                        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                        "entries": [{"path": p, **d} for p, d in sorted(entries.items())]}
            archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    return manifest


def write_backup_file(data_dir: str, path: str, *, include_secrets: bool = False) -> dict:
    """Writes the backup to `path` atomically (temp file beside it, then rename), mode 0600."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".backup-", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w+b") as handle:
            manifest = write_backup(data_dir, handle, include_secrets=include_secrets)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return manifest


def _snapshot(source: str, target: str) -> None:
    """A consistent copy of the live database through SQLite's online backup API."""
    with closing(sqlite3.connect(source, timeout=30)) as src, \
            closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def _cortex_entries(conn: sqlite3.Connection, data_dir: str) -> Iterator[tuple[str, bytes]]:
    """`(path in zip, content)` of each persona's newest committed revision of each file."""
    paths = CortexPaths(data_dir)
    root = paths.root
    for persona_id in persona_ids(conn):
        for filename in CORTEX_FILES:
            content = latest_content(conn, persona_id, filename)
            if content is not None:
                relative = os.path.relpath(paths.file(persona_id, filename), root)
                yield f"cortex/{relative}", content.encode("utf-8")


def _digest(content: bytes) -> dict:
    return {"sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}


def _file_digest(path: str) -> dict:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return {"sha256": digest.hexdigest(), "size": size}
