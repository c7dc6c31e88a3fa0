"""Reading untrusted zip files (CHARX, persona archives, backups) without trusting them.

Entries are read into memory with their real size counted (headers can lie), never extracted by
name: a name with `..`, an absolute path, a backslash, a symlink, a duplicate, an encrypted entry
or a zip bomb (total size or compression ratio over the limits) refuses the whole file. The entry
count is checked from the end record before zipfile parses the entry list (zip_directory.py).
"""
import hashlib
import io
import posixpath
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Self

from ..services.errors import ServiceError
from .errors import invalid_card, too_large
from .zip_directory import Refusal, check_directory

CHUNK = 64 * 1024


@dataclass(frozen=True)
class ZipLimits:
    """How much one zip may hold."""

    max_entries: int = 1000
    max_total: int = 64 * 1024 * 1024
    max_entry: int = 32 * 1024 * 1024
    max_ratio: int = 100


class SafeZip:
    """An opened, checked zip: `names()` and `read(name, limit)`; close it (or use `with`)."""

    def __init__(self, source: bytes | str, limits: ZipLimits = ZipLimits(),
                 refuse: Refusal = invalid_card):
        """`source` is the archive's bytes or the path of an archive file."""
        self._refuse = refuse
        self.limits = limits
        self._read_total = 0
        if not _head(source).startswith(b"PK\x03\x04"):
            raise refuse("not_zip", "The file is not a zip archive.")
        check_directory(source, limits.max_entries, refuse, too_large)
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes)
                                        else source)
        except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError,
                NotImplementedError):
            raise refuse("bad_zip", "The zip archive is damaged.") from None
        try:
            self._entries = self._check()
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the archive."""
        self._zip.close()

    def names(self) -> list[str]:
        """Every file entry's name (directories left out)."""
        return list(self._entries)

    def read(self, name: str, limit: int | None = None) -> bytes:
        """The entry's bytes, counted as they are inflated; a 4xx past any limit."""
        out = bytearray()
        self._stream(name, limit, out.extend)
        return bytes(out)

    def copy_to(self, name: str, target: BinaryIO, limit: int | None = None) -> str:
        """Writes the entry into the open binary file `target`; returns its sha256."""
        digest = hashlib.sha256()

        def write(chunk: bytes) -> None:
            digest.update(chunk)
            target.write(chunk)
        self._stream(name, limit, write)
        return digest.hexdigest()

    def _stream(self, name: str, limit: int | None, sink: Callable[[bytes], object]) -> None:
        info = self._entries.get(name)
        if info is None:
            raise self._refuse("missing_entry", f"The archive has no entry {name[:80]!r}.")
        limit = min(limit or self.limits.max_entry, self.limits.max_entry)
        size = 0
        try:
            with self._zip.open(info) as stream:
                while chunk := stream.read(CHUNK):
                    size += len(chunk)
                    self._read_total += len(chunk)
                    self._check_growth(name, size, info, limit)
                    sink(chunk)
        except ServiceError:
            raise
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                NotImplementedError):
            raise self._refuse("bad_zip", f"The zip entry {name[:80]!r} is damaged.") from None

    def _check_growth(self, name: str, size: int, info: zipfile.ZipInfo, limit: int) -> None:
        """Refuses an entry over `limit`, an archive over its total, a ratio over the limit
        (checked on the declared sizes first, then on the bytes really inflated)."""
        if size > limit:
            raise too_large("entry_too_large", f"The zip entry {name[:80]!r} is larger than "
                            f"{limit} bytes.")
        if self._read_total > self.limits.max_total:
            raise too_large("zip_bomb", f"The zip archive expands to more than "
                            f"{self.limits.max_total} bytes.")
        if size > 1024 * 1024 and size > self.limits.max_ratio * max(info.compress_size, 1):
            raise too_large("zip_bomb", f"The zip entry {name[:80]!r} is compressed more than "
                            f"{self.limits.max_ratio}:1 (a zip bomb?).")

    def _check(self) -> dict:
        infos = self._zip.infolist()
        if len(infos) > self.limits.max_entries:
            raise too_large("too_many_entries", f"The zip archive has more than "
                            f"{self.limits.max_entries} entries.")
        if not infos or min(i.header_offset for i in infos) != 0:
            raise self._refuse("polyglot", "The zip archive has data before its first entry: "
                               "a file that is also something else is refused.")
        entries, total = {}, 0
        for info in infos:
            name = self._check_name(info)
            total += info.file_size
            if name in entries:
                raise self._refuse("duplicate_entry", f"The zip archive has two entries named "
                                   f"{name[:80]!r}.")
            if not info.is_dir():
                entries[name] = info
                self._check_growth(name, info.file_size, info, self.limits.max_entry)
        if total > self.limits.max_total:
            raise too_large("zip_bomb", f"The zip archive expands to more than "
                            f"{self.limits.max_total} bytes.")
        return entries

    def _check_name(self, info: zipfile.ZipInfo) -> str:
        name = info.orig_filename
        shown = name[:80]
        if info.flag_bits & 0x1:
            raise self._refuse("encrypted", f"The zip entry {shown!r} is encrypted.")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise self._refuse("symlink", f"The zip entry {shown!r} is a symbolic link.")
        if "\\" in name or "\0" in name or name.startswith("/") or \
                (len(name) > 1 and name[1] == ":"):
            raise self._refuse("absolute_path", f"The zip entry {shown!r} has an absolute or "
                               "non-portable path.")
        parts = name.rstrip("/").split("/")
        if any(part in ("..", ".", "") for part in parts):
            raise self._refuse("path_traversal", f"The zip entry {shown!r} has `..` or empty "
                               "parts in its path.")
        return posixpath.normpath(name) + ("/" if info.is_dir() else "")


def _head(source: bytes | str) -> bytes:
    if isinstance(source, bytes):
        return source[:4]
    with open(source, "rb") as handle:
        return handle.read(4)
