"""`sdk.warm_up`: what a worker does at boot so that the first turn after it does not stall the
event loop (issue #23): without it, the first upstream request built the TLS context and
imported the SDK's tracing propagators inside the loop (50-80 ms with gevent's blocking monitor
at 20 ms)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from src.utils.api_request.sdk import shared_tls_context, warm_up
before = shared_tls_context.cache_info().currsize, 'opentelemetry.propagate' in sys.modules
warm_up()
after = shared_tls_context.cache_info().currsize, 'opentelemetry.propagate' in sys.modules
print(before, after)
"""


def test_warm_up_makes_the_tls_context_and_loads_the_propagators_ahead():
    """In a fresh interpreter, as a worker is after its app was built."""
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split("\n")[0] == "(0, False) (1, True)", done.stdout + done.stderr

