"""Key hygiene for the whole suite (DESIGN §3): no configured or sent key may leave the app.

A `LeakWatch` holds every secret a test configured (the app's API key, a key stored in
`secrets.json` beforehand, the access token) or sent (`api_key` in settings, key and test-connection bodies), and
records where one showed up. `ScanningMiddleware` wraps `app.wsgi_app`, so every response of the
test client and of the live server passes it: status line, headers, body (SSE included, chunk by
chunk with an overlap, so a key split across chunks is still found), and the frames of a
WebSocket, read off the server's socket (`WebSocketTap`). The autouse fixture in
tests/conftest.py adds the log records of the test and every file in the data directory except
`secrets.json`, then fails the test if anything leaked.
"""
import html
import io
import json
import logging
import os
import re
import threading
from urllib.parse import quote

from tests.support.ws_frames import WebSocketTap

_VOCABULARY = re.compile(r"[a-z_]+")
KEY_MIN_LENGTH = 12
SENT_KEY_PATHS = ("/api/settings", "/api/settings/api-key", "/api/settings/test-connection")
_SENT_BODY_MAX = 1024 * 1024


class LeakWatch:
    """The secrets of one test and the places they leaked to."""

    def __init__(self):
        self.secrets: set[str] = set()
        self._encoded: list[tuple[str, bytes]] = []
        self.data_dirs: set[str] = set()
        self.leaks: list[str] = []
        self.problems: list[str] = []
        self._reported: set[str] = set()
        self._lock = threading.Lock()

    def add_secret(self, value) -> None:
        """Watches `value` from now on (unless it is too short a string to be distinct)."""
        if not isinstance(value, str) or len(value.strip()) < KEY_MIN_LENGTH:
            return
        secret = value.strip()
        if _VOCABULARY.fullmatch(secret):
            # A fuzzer submits the API's own words as keys ("validation_error"); the answers
            # then name that code, which is no leak. A real key is never plain snake_case.
            return
        forms = {secret, html.escape(secret), json.dumps(secret)[1:-1],
                 quote(secret, safe="", errors="surrogatepass")}
        with self._lock:
            if secret not in self.secrets:
                self.secrets.add(secret)
                self._encoded = [*self._encoded, *((secret, form.encode("utf-8", "surrogatepass"))
                                                   for form in sorted(forms))]

    def add_data_dir(self, path) -> None:
        """Scans every file under `path` (except `secrets.json`) when the test ends."""
        self.data_dirs.add(os.fspath(path))
        for key in _stored_keys(os.fspath(path)):
            self.add_secret(key)

    @property
    def longest(self) -> int:
        """Length of the longest encoded form of a watched secret (the chunk overlap needed)."""
        return max((len(form) for _, form in self._encoded), default=0)

    def scan(self, where: str, data) -> None:
        """Records a leak for each watched secret found in `data` (bytes or text)."""
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        for secret, form in self._encoded:
            if form in data:
                self._leak(f"{where}: contains the key ending in …{secret[-4:]}")

    def scan_log_records(self, records) -> None:
        """Scans each record's message, exception text and stack."""
        formatter = _Formatter()
        for record in records:
            self.scan(f"log record {record.name}:{record.levelname}", formatter.text(record))

    def scan_files(self) -> None:
        """Scans every stored file of the watched data directories but `secrets.json`."""
        for data_dir in sorted(self.data_dirs):
            allowed = os.path.join(data_dir, "secrets.json")
            for root, _, names in os.walk(data_dir):
                for name in names:
                    path = os.path.join(root, name)
                    if path == allowed or not os.path.isfile(path):
                        continue
                    try:
                        with open(path, "rb") as fh:
                            data = fh.read()
                    except FileNotFoundError:  # a temp file replaced meanwhile
                        continue
                    self.scan(f"stored file {os.path.relpath(path, data_dir)}", data)

    def problem(self, message: str) -> None:
        """Records that part of the traffic could not be scanned (which would hide a leak)."""
        with self._lock:
            self.problems.append(message)

    def report(self) -> str | None:
        """A description of every leak and scanning problem, or None when there is none."""
        lines = [*dict.fromkeys(self.leaks), *self.problems]
        return "\n".join(lines) if lines else None

    def news(self) -> str | None:
        """Like `report`, but only what was not reported before (each leak fails one phase)."""
        with self._lock:
            lines = [line for line in [*dict.fromkeys(self.leaks), *self.problems]
                     if line not in self._reported]
            self._reported.update(lines)
        return "\n".join(lines) if lines else None

    def _leak(self, message: str) -> None:
        with self._lock:
            self.leaks.append(message)



class ScanningMiddleware:
    """WSGI middleware: notes keys sent to the API and scans everything the app sends back."""

    def __init__(self, app, watch: LeakWatch):
        self.app = app
        self.watch = watch

    def __call__(self, environ, start_response):
        where = f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}"
        self._note_sent_key(environ)
        if "werkzeug.socket" in environ and \
                environ.get("HTTP_UPGRADE", "").lower() == "websocket":
            environ["werkzeug.socket"] = WebSocketTap(environ["werkzeug.socket"], self.watch,
                                                      f"{where} (WebSocket)")

        def scanning_start_response(status, headers, exc_info=None):
            lines = "\n".join(f"{name}: {value}" for name, value in headers)
            self.watch.scan(f"{where}: response status and headers", f"{status}\n{lines}")
            return start_response(status, headers, exc_info)

        return _ScannedBody(self.app(environ, scanning_start_response), self.watch,
                            f"{where}: response body")

    def _note_sent_key(self, environ) -> None:
        if environ.get("PATH_INFO") not in SENT_KEY_PATHS:
            return
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return
        if not 0 < length <= _SENT_BODY_MAX:
            return
        body = environ["wsgi.input"].read(length)
        environ["wsgi.input"] = io.BytesIO(body)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # the app answers those bodies with a 400
            return
        if isinstance(data, dict):
            self.watch.add_secret(data.get("api_key"))


class _ScannedBody:
    """The app's response iterable, scanned chunk by chunk; `close` is passed on (it is what
    cancels a stream when the client goes away)."""

    def __init__(self, body, watch: LeakWatch, where: str):
        self._body = body
        self._iter = iter(body)
        self._watch = watch
        self._where = where
        self._tail = b""

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        chunk = next(self._iter)
        window = self._tail + chunk
        self._watch.scan(self._where, window)
        keep = max(self._watch.longest - 1, 0)
        self._tail = window[-keep:] if keep else b""
        return chunk

    def close(self) -> None:
        """Closes the app's iterable."""
        close = getattr(self._body, "close", None)
        if close is not None:
            close()


class _Formatter:
    """Renders a log record the way a handler would: message, traceback and stack."""

    def text(self, record) -> str:
        """The record as text."""
        formatter = logging.Formatter()
        try:
            parts = [record.getMessage()]
        except Exception as err:  # a record whose arguments do not fit its format
            parts = [f"{record.msg!r} {record.args!r} ({err})"]
        if record.exc_info:
            parts.append(formatter.formatException(record.exc_info))
        elif record.exc_text:
            parts.append(record.exc_text)
        if record.stack_info:
            parts.append(record.stack_info)
        return "\n".join(str(part) for part in parts)


STORED_KEY_FIELDS = ("anthropic_api_key", "openai_api_key")


def _stored_keys(data_dir: str) -> list[str]:
    """The keys (every provider's) a test stored in `secrets.json` before the app started."""
    try:
        with open(os.path.join(data_dir, "secrets.json"), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    return [data[name] for name in STORED_KEY_FIELDS if isinstance(data.get(name), str)]
