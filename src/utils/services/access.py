"""Who may talk to the app (DESIGN §9): the access token, the sign-in cookie, and failure limits.

Nothing compares secrets directly: both sides are reduced to an HMAC first and compared with
`hmac.compare_digest`, so neither the content nor the length of the token shows in the timing.
The cookie holds `HMAC(token, "session-cookie")`, never the token itself, and stops working
when the token changes. Failed attempts are counted per client address in a sliding window.
"""
import hashlib
import hmac
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from typing import Callable

COOKIE_NAME = "persona_session"
COOKIE_MAX_AGE = 30 * 24 * 3600
FAILURE_LIMIT = 10
FAILURE_WINDOW = 60.0
TRACKED_CLIENTS_MAX = 10_000


class AccessGate:
    """Checks a presented token or sign-in cookie against the configured access token."""

    def __init__(self, token: str | None):
        self._token = token or None
        self._compare_key = secrets.token_bytes(32)
        self._cookie = _mac(self._token, "session-cookie") if self._token else None

    @property
    def enabled(self) -> bool:
        """True when an access token is configured, so every request must carry it."""
        return self._token is not None

    def token_matches(self, given: str | None) -> bool:
        """True when `given` is the access token (constant time, whatever its length)."""
        if not self.enabled or not isinstance(given, str):
            return False
        return hmac.compare_digest(self._digest(given), self._digest(self._token))

    def cookie_value(self) -> str:
        """The value of the sign-in cookie: a MAC of the token, never the token."""
        if self._cookie is None:
            raise RuntimeError("no access token is configured")
        return self._cookie

    def cookie_matches(self, given: str | None) -> bool:
        """True when `given` is the current sign-in cookie value (constant time)."""
        if not self.enabled or not isinstance(given, str):
            return False
        return hmac.compare_digest(self._digest(given), self._digest(self._cookie))

    def _digest(self, value: str) -> bytes:
        return hmac.new(self._compare_key, value.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).digest()


class FailureLimiter:
    """Counts failed attempts per client; after `limit` within `window` seconds, it is locked
    until the oldest of them is older than the window."""

    def __init__(self, limit: int = FAILURE_LIMIT, window: float = FAILURE_WINDOW, *,
                 clock: Callable[[], float] = time.monotonic,
                 max_clients: int = TRACKED_CLIENTS_MAX):
        self.limit, self.window = limit, window
        self._clock = clock
        self._max_clients = max_clients
        self._failures: OrderedDict[str, deque] = OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> int | None:
        """Seconds until `client` may try again, or None when it is not locked out."""
        with self._lock:
            times = self._current(client)
            if times is None or len(times) < self.limit:
                return None
            return max(1, math.ceil(times[0] + self.window - self._clock()))

    def record_failure(self, client: str) -> None:
        """Counts one failed attempt by `client`."""
        with self._lock:
            times = self._current(client)
            if times is None:
                times = self._failures[client] = deque(maxlen=self.limit)
            times.append(self._clock())
            self._failures.move_to_end(client)
            while len(self._failures) > self._max_clients:
                self._failures.popitem(last=False)

    def _current(self, client: str) -> deque | None:
        """The client's failures inside the window (older ones dropped), or None."""
        times = self._failures.get(client)
        if times is None:
            return None
        cutoff = self._clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failures[client]
            return None
        return times


def _mac(key: str, message: str) -> str:
    return hmac.new(key.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()
