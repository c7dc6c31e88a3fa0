"""Crash-safe file replacement: readers see the old file or the new one, never a torn mix."""
import os
import tempfile

TEMP_SUFFIX = ".tmp"


def atomic_write(path: str, data: bytes) -> None:
    """Temp file beside `path`, fsync, rename over `path`, fsync the dir: never a torn file."""
    directory, name = os.path.split(path)
    fd, temp_path = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_path, path)
    except BaseException:
        _unlink_quietly(temp_path)
        raise
    fsync_dir(directory)


def fsync_dir(directory: str) -> None:
    """Makes a rename or unlink in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temp_files(directory: str) -> list[str]:
    """Deletes temp files a killed writer left behind; call only while holding the persona lock."""
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return removed
    for name in names:
        if name.startswith(".") and name.endswith(TEMP_SUFFIX):
            _unlink_quietly(os.path.join(directory, name))
            removed.append(name)
    return removed


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
