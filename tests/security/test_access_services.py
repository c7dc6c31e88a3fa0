"""The access services on their own: the token gate, the failure limiter, Origin and Host rules."""
import ast
import inspect

import pytest

from src.utils.services import access
from src.utils.services.access import AccessGate, FailureLimiter
from src.utils.services.origins import is_loopback_host, is_own_origin, own_origins, parse_origin
from src.utils.storage import Database

TOKEN = "gate-token-" + "k" * 40


@pytest.fixture
def db(data_dir):
    return Database(str(data_dir / "app.db"))


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_gate_accepts_only_the_token_and_its_cookie():
    gate = AccessGate(TOKEN)
    assert gate.enabled and gate.token_matches(TOKEN)
    for wrong in (None, "", TOKEN[:-1], TOKEN + " ", "ü" * 5, 42, b"bytes"):
        assert not gate.token_matches(wrong)
    cookie = gate.cookie_value()
    assert TOKEN not in cookie and gate.cookie_matches(cookie)
    assert not gate.cookie_matches(TOKEN) and not gate.token_matches(cookie)
    assert AccessGate(TOKEN).cookie_value() == cookie != AccessGate(TOKEN + "2").cookie_value()


def test_without_a_token_nothing_matches():
    gate = AccessGate(None)
    assert not gate.enabled and not gate.token_matches("") and not gate.cookie_matches("")
    with pytest.raises(RuntimeError):
        gate.cookie_value()


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and ast.unparse(node.func) == name]


def test_a_check_compares_fixed_length_macs_in_constant_time_whatever_the_guess():
    """A naive `==` returns at the first differing byte, so its timing tells how much of a
    guess is right. The checks are constant time by construction, which is what is asserted
    (timing them measures the machine's load): each side is reduced to an HMAC-SHA256 of 32
    bytes whatever its length or content, the two MACs are compared with
    `hmac.compare_digest`, and nothing in the module compares a secret with `==`."""
    gate = AccessGate(TOKEN)
    guesses = ("", "x", "x" + TOKEN[1:], TOKEN[:-1] + "x", TOKEN * 1000, "ü" * 5, "\ud800")
    assert {len(gate._digest(guess)) for guess in guesses} == {32}
    source = ast.parse(inspect.getsource(access))
    checks = {node.name: node for node in ast.walk(source)
              if isinstance(node, ast.FunctionDef) and node.name.endswith("_matches")}
    assert set(checks) == {"token_matches", "cookie_matches"}
    for name, check in checks.items():
        final = check.body[-1]
        assert isinstance(final, ast.Return), name
        assert ast.unparse(final.value) in (
            "hmac.compare_digest(self._digest(given), self._digest(self._token))",
            "hmac.compare_digest(self._digest(given), self._digest(self._cookie))"), name
    assert len(_calls(source, "hmac.compare_digest")) == 2
    equalities = [ast.unparse(node) for node in ast.walk(source) if isinstance(node, ast.Compare)
                  and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)]
    secrets = ("given", "token", "cookie", "digest", "mac")
    assert not [c for c in equalities if any(word in c.lower() for word in secrets)], equalities


def test_the_limiter_locks_after_the_limit_and_frees_after_the_window(db):
    clock = Clock()
    limiter = FailureLimiter(db, 3, 60.0, clock=clock)
    for _ in range(2):
        limiter.record_failure("a")
        assert limiter.retry_after("a") is None
    clock.now += 10
    limiter.record_failure("a")
    assert limiter.retry_after("a") == 50
    assert limiter.retry_after("b") is None
    clock.now += 49.5
    assert limiter.retry_after("a") == 1
    clock.now += 0.5
    assert limiter.retry_after("a") is None


def test_the_global_cap_locks_everyone_when_many_addresses_guess(db):
    clock = Clock()
    limiter = FailureLimiter(db, 3, 60.0, global_limit=5, clock=clock)
    for n in range(5):
        limiter.record_failure(f"198.51.100.{n}")
        clock.now += 1
    assert limiter.retry_after("203.0.113.9") == 55  # never failed, but the cap is reached
    clock.now += 55
    assert limiter.retry_after("203.0.113.9") is None


def test_every_limiter_on_the_database_sees_the_same_failures(db, data_dir):
    other = FailureLimiter(Database(str(data_dir / "app.db")), 2, 60.0)  # another process
    mine = FailureLimiter(db, 2, 60.0)
    mine.record_failure("a")
    other.record_failure("a")
    assert mine.retry_after("a") is not None and other.retry_after("a") is not None


@pytest.mark.parametrize("value,expected", [
    ("http://localhost:5000", ("http", "localhost", 5000)),
    ("https://Persona.LAN", ("https", "persona.lan", 443)),
    ("http://[::1]:8080", ("http", "::1", 8080)),
    ("null", None), ("", None), (None, None), ("file://", None), ("ws://localhost", None),
    ("http://localhost:99999", None), ("http://user@localhost", None),
    ("http://localhost/path", None), ("http://local host", None),
])
def test_origins_are_parsed_strictly(value, expected):
    assert parse_origin(value) == expected


def test_a_proxy_adds_its_view_of_the_origin():
    own = own_origins("http", "persona.lan", "https", None)
    assert is_own_origin("https://persona.lan", own)
    assert is_own_origin("http://persona.lan", own)
    assert not is_own_origin("https://persona.lan:8443", own)
    own = own_origins("http", "127.0.0.1:5000", "https, http", "persona.lan:8443")
    assert is_own_origin("https://persona.lan:8443", own)
    assert not is_own_origin("https://evil.example", own)


@pytest.mark.parametrize("host,expected", [
    ("localhost", True), ("LOCALHOST:1", True), ("127.0.0.1", True), ("127.1.2.3:80", True),
    ("[::1]:5000", True), ("::1", False), ("evil.example", False), ("", False), (None, False),
    ("localhost.evil.example", False), ("0.0.0.0", False),
])
def test_loopback_host_names(host, expected):
    assert is_loopback_host(host) is expected
