"""`python -m src.app`'s command line (issue 20): `--help` prints the usage of every command and
exits 0 instead of starting a server; a wrong command is refused with the usage, also without a
server. Each run is a real interpreter start in its own process group, so a server started by
mistake is found (the run does not end) and stopped whole."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
DEADLINE = 60  # an interpreter start under load; a server would never end by itself


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PERSONA_PORT": str(free_port()), "PERSONA_LOG_LEVEL": "WARNING"}
    with subprocess.Popen([sys.executable, "-m", "src.app", *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"python -m src.app {' '.join(args)} did not end: it serves")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_help_prints_every_command_and_exits():
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m src.app")
    for command in ("serve", "backup", "restore"):
        assert f"    {command} " in done.stdout
    assert "PERSONA_DATA_DIR" in done.stdout  # where the settings come from


@pytest.mark.parametrize("command, options", [("backup", ("PATH", "--include-secrets")),
                                               ("restore", ("PATH", "--force")),
                                               ("serve", ())])
def test_each_command_has_its_own_help(command, options):
    done = _run(command, "-h")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m src.app {command}")
    assert all(option in done.stdout for option in options)


def test_an_unknown_command_is_refused_with_the_usage():
    done = _run("srve")
    assert done.returncode == 2
    assert "usage: python -m src.app" in done.stderr and "invalid choice: 'srve'" in done.stderr
