"""Restoring a whole-app backup: check everything first, then swap directories, never delete.

Order: the manifest is read and the schema compared (a backup from a newer app is refused);
every entry is streamed into a fresh directory beside the data directory while its sha256 is
computed, and any mismatch, unlisted or missing entry, or unexpected path refuses the backup;
the restored database must pass `PRAGMA integrity_check`. Only then is the restored directory
moved into place; an existing, non-empty data directory is first moved aside (with `force`),
never deleted.
"""
import json
import os
import re
import shutil
import sqlite3
import tempfile
from contextlib import closing
from datetime import UTC, datetime

from ..storage.db import applied_migrations, intact
from .backup import (
    DATABASE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    SECRETS,
    known_migrations,
    schema_number,
)
from .errors import invalid_archive, known_version
from .safezip import SafeZip, ZipLimits

LIMITS = ZipLimits(max_entries=200_000, max_total=16 * 1024 ** 3, max_entry=8 * 1024 ** 3,
                   max_ratio=1000)
_ALLOWED = re.compile(r"(app\.db|secrets\.json|cortex/(default|custom/[a-z0-9]{8,32})/"
                      r"(memory|soul|relationship)\.md)")


def restore_backup(archive_path: str, data_dir: str, *, force: bool = False) -> dict:
    """Restores `archive_path` into `data_dir`; returns `{manifest, moved_aside}`."""
    data_dir = os.path.abspath(data_dir)
    _check_target(data_dir, force)
    parent = os.path.dirname(data_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(data_dir)}.restore-", dir=parent)
    try:
        with SafeZip(archive_path, LIMITS, refuse=invalid_archive) as archive:
            manifest = _manifest(archive)
            _extract(archive, manifest, staging)
        _check_database(os.path.join(staging, DATABASE), manifest)
        moved = _swap(staging, data_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"manifest": manifest, "moved_aside": moved}


def _check_target(data_dir: str, force: bool) -> None:
    if os.path.isdir(data_dir) and os.listdir(data_dir) and not force:
        raise invalid_archive("target_not_empty", f"The data directory {data_dir} is not empty: "
                              "restore with --force to move it aside first (it is never "
                              "deleted).")


def _manifest(archive: SafeZip) -> dict:
    if MANIFEST not in archive.names():
        raise invalid_archive("no_manifest", "This is not a Persona Cortex backup (no "
                              "manifest.json).")
    try:
        manifest = json.loads(archive.read(MANIFEST, 64 * 1024 * 1024))
    except (ValueError, UnicodeDecodeError):
        raise invalid_archive("bad_manifest", "The backup's manifest is not valid JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or \
            not isinstance(manifest.get("entries"), list) or \
            not isinstance(manifest.get("migrations"), list):
        raise invalid_archive("bad_manifest", "The backup's manifest is not one this app wrote.")
    if not known_version(manifest.get("format_version"), (FORMAT_VERSION,)):
        raise invalid_archive("unknown_format_version", f"The backup's format version "
                              f"{str(manifest.get('format_version'))[:20]!r} is not one this app "
                              f"reads (it reads {FORMAT_VERSION}): a newer app wrote it, or it "
                              "was changed.")
    unknown = [m for m in manifest["migrations"] if m not in known_migrations()]
    if unknown:
        raise invalid_archive("newer_schema", f"This backup was made by a newer version of the "
                              f"app (schema {manifest.get('schema_version')}, this app has "
                              f"{schema_number(known_migrations())}): update the app, then "
                              "restore it.")
    return manifest


def _extract(archive: SafeZip, manifest: dict, staging: str) -> None:
    listed = {}
    for entry in manifest["entries"]:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not _ALLOWED.fullmatch(path) or path in listed:
            raise invalid_archive("bad_manifest", "The backup's manifest lists an unexpected "
                                  "entry.")
        listed[path] = entry.get("sha256")
    present = set(archive.names()) - {MANIFEST}
    if present != set(listed) or DATABASE not in listed:
        raise invalid_archive("checksum_mismatch", "The backup's entries do not match its "
                              "manifest (it was changed or is incomplete).")
    for path, expected in listed.items():
        target = os.path.join(staging, *path.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            if path == SECRETS:
                os.fchmod(handle.fileno(), 0o600)
            actual = archive.copy_to(path, handle)
        if actual != expected:
            raise invalid_archive("checksum_mismatch", f"The backup entry {path} does not match "
                                  "its checksum (the backup was changed or is damaged).")


def _check_database(path: str, manifest: dict) -> None:
    try:
        with closing(sqlite3.connect(path)) as conn:
            ok = intact(conn)
            migrations = applied_migrations(conn)
    except sqlite3.DatabaseError:
        raise invalid_archive("bad_database", "The backup's database cannot be read.") from None
    if not ok or migrations != sorted(manifest["migrations"]):
        raise invalid_archive("bad_database", "The backup's database fails its integrity check.")


def _swap(staging: str, data_dir: str) -> str | None:
    """Moves the restored directory into place; an existing data dir is moved aside first."""
    moved = None
    if os.path.isdir(data_dir):
        if os.listdir(data_dir):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            moved = f"{data_dir}.before-restore-{stamp}"
            suffix = 1
            while os.path.exists(moved):
                moved, suffix = f"{data_dir}.before-restore-{stamp}-{suffix}", suffix + 1
            os.rename(data_dir, moved)
        else:
            os.rmdir(data_dir)
    os.rename(staging, data_dir)
    return moved
