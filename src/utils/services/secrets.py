"""The API keys entered in the UI, kept in `DATA_DIR/secrets.json` with mode 0600.

One key per provider (`anthropic_api_key`, `openai_api_key`), each with the base URL it was
saved for (`anthropic_base_url`, `openai_base_url`: the key is sent there and nowhere else,
DESIGN §15 "Keys"); storing or removing one keeps the other. Read before every upstream
request, so every worker process uses the same key: a `stat` of the file each time, and a read
and parse only when its signature changed since the last read (`cortex/snapshots.py`
`KeptFile`: a key saved, removed or moved by any process changes the inode, size or times; a
file changed within `RACY_SECONDS` of being read is read again every time).
"""
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from ..cortex.snapshots import KeptFile, read_with_stat
from ..logsafe import register_secret

log = logging.getLogger(__name__)


class SecretStore:
    """Reads and atomically writes `secrets.json`; never logs or returns more than the last 4 chars."""

    def __init__(self, data_dir: str, clock: Callable[[], int] = time.time_ns):
        self.path = os.path.join(data_dir, "secrets.json")
        self._lock = threading.Lock()
        self._reported: tuple | None = None
        self._kept: KeptFile[dict[str, Any]] = KeptFile(clock)

    FIELDS: ClassVar[dict[str, str]] = {"anthropic": "anthropic_api_key", "openai_compatible": "openai_api_key"}
    URL_FIELDS: ClassVar[dict[str, str]] = {"anthropic": "anthropic_base_url", "openai_compatible": "openai_base_url"}

    def load_api_key(self, provider: str = "anthropic") -> str | None:
        """The stored key, or None when none is stored or the file is unreadable (read before
        every upstream request, so a key another worker process stored or removed counts; the
        key read is masked in this process's logs from then on)."""
        return self.load_binding(provider)[0]

    def load_binding(self, provider: str = "anthropic") -> tuple[str | None, str | None]:
        """`(key, base_url it belongs to)`; the URL is None for a key stored before keys were
        bound to URLs (SettingsService binds those at start-up)."""
        try:
            data = self._content()
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError):
            self._report_unreadable()
            return None, None
        value, url = data.get(self.FIELDS[provider]), data.get(self.URL_FIELDS[provider])
        value = value if isinstance(value, str) and value else None
        register_secret(value)
        return value, (url if value and isinstance(url, str) and url else None)

    def _content(self) -> dict[str, Any]:
        """The file's JSON object as it is now: the one kept while the file's signature stands
        (shared: read it, never change it), else read and parsed again (ValueError: not a JSON
        object; FileNotFoundError: no file)."""
        kept = self._kept.lookup(os.stat(self.path))
        if kept is not None:
            return kept
        raw, st = read_with_stat(self.path)  # stat first: an edit during the read changes it
        if raw is None or st is None:
            raise FileNotFoundError(self.path)
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("secrets.json holds no JSON object")
        self._kept.remember(st, data)
        return data

    def _report_unreadable(self) -> None:
        """Logs a broken secrets.json once per version of the file, not on every request."""
        try:
            st = os.stat(self.path)
            version = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            version = None
        if version != self._reported:
            self._reported = version
            log.error("secrets.json is unreadable; ignoring it")

    def save_api_key(self, key: str, provider: str = "anthropic",
                     base_url: str | None = None) -> None:
        """Stores `key` for `provider`, bound to `base_url` (mode 0600, temp file + fsync +
        rename)."""
        entry = {self.FIELDS[provider]: key}
        if base_url:
            entry[self.URL_FIELDS[provider]] = base_url
        self._write({**self._all(skip=provider), **entry})

    def delete_api_key(self, provider: str = "anthropic") -> None:
        """Removes the provider's stored key (the file goes when no key is left)."""
        rest = self._all(skip=provider)
        if rest:
            self._write(rest)
            return
        with self._lock:
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass

    def _all(self, skip: str | None = None) -> dict:
        """Every stored key with its URL, except `skip`'s."""
        keys = {}
        for provider, field in self.FIELDS.items():
            value, url = self.load_binding(provider)
            if value and provider != skip:
                keys[field] = value
                if url:
                    keys[self.URL_FIELDS[provider]] = url
        return keys

    def _write(self, data: dict) -> None:
        directory = os.path.dirname(self.path)
        os.makedirs(directory, exist_ok=True)
        with self._lock:
            fd, tmp = tempfile.mkstemp(prefix=".secrets.", dir=directory)
            try:
                os.fchmod(fd, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                if os.path.exists(tmp):
                    os.remove(tmp)
                raise
