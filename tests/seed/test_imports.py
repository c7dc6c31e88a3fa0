"""The package imports cleanly as `src.utils.api_request` and as `utils.api_request` (seed 000's
layout, `src/` on `sys.path`), in either order, in one process: both names work, and state that
must be one per process (the secret registry that masks keys in logs, the log record factory) is
not initialised twice. Each order runs in a fresh interpreter."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-dual-import-0123456789"
SCRIPT = """
import io, logging, sys
sys.path.insert(0, {root!r}); sys.path.append({src!r})
first, second = {order!r}
for name in (first, second):
    __import__(name + ".api_request.client")
modules = {{name: sys.modules[name + ".api_request.client"] for name in (first, second)}}
for module in modules.values():
    assert module.anthropic is sys.modules["anthropic"], "the SDK by its own name"
    assert module.MAX_TOOL_ROUNDS == 10 and callable(module.ApiClient._extract_text_from_content)
sys.modules[first + ".logsafe"].configure_logging("INFO")
factory = logging.getLogRecordFactory()
sys.modules[second + ".logsafe"].configure_logging("INFO")
assert logging.getLogRecordFactory() is factory, "one masking factory"
assert len(logging.getLogger().handlers) == 1, "one handler"
client = modules[second].ApiClient(api_key={key!r})
assert client.client is not None and client.is_ready
stream = io.StringIO()
logging.getLogger().handlers[0].setStream(stream)
logging.getLogger("probe").warning("the key is %s", {key!r})
assert {key!r} not in stream.getvalue() and "[redacted]" in stream.getvalue(), stream.getvalue()
client.close()
print("ok")
"""


@pytest.mark.parametrize("order", [("src.utils", "utils"), ("utils", "src.utils")])
def test_both_import_names_work_together_in_one_process(order):
    script = SCRIPT.format(root=str(ROOT), src=str(ROOT / "src"), order=order, key=KEY)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
