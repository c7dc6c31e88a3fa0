"""The API keys entered in the UI, kept in `DATA_DIR/secrets.json` with mode 0600.

One key per provider (`anthropic_api_key`, `openai_api_key`), each with the base URL it was
saved for (`anthropic_base_url`, `openai_base_url`: the key is sent there and nowhere else,
DESIGN §15 "Keys"); storing or removing one keeps the other. Read before every upstream
request, so every worker process uses the same key.
"""
import json
import logging
import os
import tempfile
import threading
from typing import ClassVar

from ..logsafe import register_secret

log = logging.getLogger(__name__)


class SecretStore:
    """Reads and atomically writes `secrets.json`; never logs or returns more than the last 4 chars."""

    def __init__(self, data_dir: str):
        self.path = os.path.join(data_dir, "secrets.json")
        self._lock = threading.Lock()
        self._reported: tuple | None = None

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
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            value, url = data.get(self.FIELDS[provider]), data.get(self.URL_FIELDS[provider])
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError, AttributeError):
            self._report_unreadable()
            return None, None
        value = value if isinstance(value, str) and value else None
        register_secret(value)
        return value, (url if value and isinstance(url, str) and url else None)

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
