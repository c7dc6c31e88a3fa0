"""One reply per session across threads and processes (DATA_DIR/locks/sessions.lock)."""
import signal
import subprocess
import sys

from src.utils.services.session_leases import SessionLeases

HOLDER = """
import sys
from src.utils.services.session_leases import SessionLeases
leases = SessionLeases(sys.argv[1])
assert leases.claim(sys.argv[2])
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_session_is_claimed_once_and_freed_by_release(tmp_path):
    leases = SessionLeases(str(tmp_path))
    try:
        assert leases.claim("a" * 16) and not leases.claim("a" * 16)
        assert leases.is_busy("a" * 16) and not leases.is_busy("b" * 16)
        assert leases.claim("b" * 16)
        leases.release("a" * 16)
        assert not leases.is_busy("a" * 16) and leases.claim("a" * 16)
    finally:
        leases.close()


def test_a_lease_held_by_another_process_blocks_until_that_process_dies(tmp_path):
    leases = SessionLeases(str(tmp_path))
    sid = "c" * 16
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), sid],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as holder:
        try:
            assert holder.stdout.readline() == b"held\n"
            assert leases.is_busy(sid) and not leases.claim(sid)
            assert leases.claim("d" * 16)
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=10)
    try:
        assert not leases.is_busy(sid) and leases.claim(sid)
    finally:
        leases.close()
