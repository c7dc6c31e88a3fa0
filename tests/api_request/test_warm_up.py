"""`sdk.warm_up`: what a worker does at boot so that the first turn after it does not stall the
event loop (issue #23): without it, the first upstream request built the TLS context and
imported the SDK's tracing propagators inside the loop (50-80 ms with gevent's blocking monitor
at 20 ms), and on the OpenAI-compatible path imported the `openai` SDK (about 0.4 s)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from src.utils.api_request.sdk import shared_tls_context, warm_up
def state():
    return (shared_tls_context.cache_info().currsize, 'opentelemetry.propagate' in sys.modules,
            'openai' in sys.modules)
before = state()
warm_up(openai_compatible=sys.argv[1] == 'openai')
print(before, state())
"""


def _probe(provider: str) -> str:
    """The probe's line, in a fresh interpreter as a worker is after its app was built."""
    done = subprocess.run([sys.executable, "-c", PROBE, provider], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return done.stdout.split("\n")[0]


def test_warm_up_makes_the_tls_context_and_loads_the_propagators_ahead():
    assert _probe("anthropic") == "(0, False, False) (1, True, False)"


def test_the_openai_sdk_is_loaded_ahead_only_where_it_is_the_provider():
    """Its import stalled the first OpenAI-compatible turn about 0.4 s; an app on Anthropic
    never loads it (13 MiB)."""
    assert _probe("openai") == "(0, False, False) (1, True, True)"

