"""The API key entered in the UI, kept in `DATA_DIR/secrets.json` with mode 0600."""
import json
import logging
import os
import tempfile
import threading

from ..logsafe import register_secret

log = logging.getLogger(__name__)


class SecretStore:
    """Reads and atomically writes `secrets.json`; never logs or returns more than the last 4 chars."""

    def __init__(self, data_dir: str):
        self.path = os.path.join(data_dir, "secrets.json")
        self._lock = threading.Lock()
        self._reported: tuple | None = None

    def load_api_key(self) -> str | None:
        """The stored key, or None when none is stored or the file is unreadable (read before
        every upstream request, so a key another worker process stored or removed counts; the
        key read is masked in this process's logs from then on)."""
        try:
            with open(self.path, encoding="utf-8") as fh:
                value = json.load(fh).get("anthropic_api_key")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, AttributeError):
            self._report_unreadable()
            return None
        value = value if isinstance(value, str) and value else None
        register_secret(value)
        return value

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

    def save_api_key(self, key: str) -> None:
        """Stores `key` (mode 0600, temp file + fsync + rename)."""
        self._write({"anthropic_api_key": key})

    def delete_api_key(self) -> None:
        """Removes the stored key."""
        with self._lock:
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass

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
