"""What a worker loads: the OpenAI SDK (about 13 MiB per worker process) only once an
OpenAI-compatible endpoint is used, never for an app that talks to Anthropic."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from src.app import create_app
from src.utils import provider
app = create_app({"DATA_DIR": sys.argv[1], "ANTHROPIC_API_KEY": "sk-ant-imports-0000000000"})
before = "openai" in sys.modules
with app.app_context():
    client = provider.get_api_client()
    from src.utils.api_request.types import Connection
    client.openai_backend(Connection("openai_compatible", "http://127.0.0.1:9/v1", None, None))
print(json.dumps({"before": before, "after": "openai" in sys.modules}))
"""


def test_the_openai_sdk_is_loaded_only_when_an_endpoint_is_used(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"before": False, "after": True}
