"""Who may talk to the app (DESIGN §9): the access token, the sign-in cookie, and failure limits.

Nothing compares secrets directly: both sides are reduced to an HMAC first and compared with
`hmac.compare_digest`, so neither the content nor the length of the token shows in the timing.
The cookie holds `HMAC(token, "session-cookie")`, never the token itself, and stops working
when the token changes. Failed attempts are counted per client address and across all
addresses in a sliding window, in SQLite, so the limits hold across worker processes.
"""
import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Callable

from ..storage import Database, access_failures as failures

COOKIE_NAME = "persona_session"
COOKIE_MAX_AGE = 30 * 24 * 3600
FAILURE_LIMIT = 10
FAILURE_WINDOW = 60.0
GLOBAL_FAILURE_LIMIT = 100


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
        if self._token is None or not isinstance(given, str):
            return False
        return hmac.compare_digest(self._digest(given), self._digest(self._token))

    def cookie_value(self) -> str:
        """The value of the sign-in cookie: a MAC of the token, never the token."""
        if self._cookie is None:
            raise RuntimeError("no access token is configured")
        return self._cookie

    def cookie_matches(self, given: str | None) -> bool:
        """True when `given` is the current sign-in cookie value (constant time)."""
        if self._cookie is None or not isinstance(given, str):
            return False
        return hmac.compare_digest(self._digest(given), self._digest(self._cookie))

    def _digest(self, value: str) -> bytes:
        return hmac.new(self._compare_key, value.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).digest()


class FailureLimiter:
    """Counts failed attempts in SQLite, so every worker process sees them all: a client with
    `limit` failures within `window` seconds, or everyone once `global_limit` failures from any
    addresses fell within the window, must wait until the oldest of them leaves the window."""

    def __init__(self, db: Database, limit: int = FAILURE_LIMIT, window: float = FAILURE_WINDOW,
                 global_limit: int = GLOBAL_FAILURE_LIMIT, *,
                 clock: Callable[[], float] = time.time):
        self.limit, self.window, self.global_limit = limit, window, global_limit
        self._db = db
        self._clock = clock

    def retry_after(self, client: str) -> int | None:
        """Seconds until `client` may try again, or None when it is not locked out."""
        now = self._clock()
        conn, cutoff = self._db.conn(), now - self.window
        mine = failures.nth_newest_since(conn, cutoff, self.limit, client)
        everyone = failures.nth_newest_since(conn, cutoff, self.global_limit)
        oldest = max((at for at in (mine, everyone) if at is not None), default=None)
        if oldest is None:
            return None
        return max(1, math.ceil(oldest + self.window - now))

    def record_failure(self, client: str) -> None:
        """Counts one failed attempt by `client` (and forgets those older than the window)."""
        now = self._clock()
        with self._db.transaction():
            conn = self._db.conn()
            failures.add_failure(conn, client[:200], now, now - self.window)


def _mac(key: str, message: str) -> str:
    return hmac.new(key.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()
