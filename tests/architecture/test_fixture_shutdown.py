"""No test fixture closes the app's API client itself: the `app` fixture's
`provider.shutdown_services` closes it, after the title requests in flight have ended
(`services_root.stop`: `titles.close()` waits for them, then `api_client.close()`).

A fixture torn down before the app's (one that uses `app`) closed the client ahead of that
wait. A title request still connecting then got its connection from a pool already closed,
which never learned of it: the request completed, and its socket was left to the garbage
collector, an `unclosed socket` ResourceWarning at teardown (seen once in a loaded fresh-clone
suite run, tests/openapi/test_conformance_edges.py::test_websocket_frames_conform, and about
once in 1,400 runs of that test under load)."""
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
EARLY_CLOSE = re.compile(r"get_api_client\([^)]*\)\s*\.close\(\)|services_of\([^)]*\)\s*"
                         r"\.api_client\s*\.close\(\)")


def test_no_fixture_closes_the_apps_api_client_ahead_of_its_shutdown():
    offenders = [f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
                 for path in sorted(TESTS.rglob("*.py")) if path != Path(__file__).resolve()
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if EARLY_CLOSE.search(line)]
    assert not offenders, "\n".join(offenders)
