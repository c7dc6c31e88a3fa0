"""The README's serve command on a fresh clone (issue 20): nothing but `requirements.txt`.

The working tree as git sees it (HEAD plus uncommitted changes to tracked files; untracked and
ignored files such as `.venv/`, `instance/` and `.env` stay behind) is copied to a temporary
directory, and `bash scripts/serve.sh` runs there as a new user would run it: it creates `.venv`
from `requirements.txt` alone (the test dependencies once hid a runtime requirement of gunicorn's
gevent worker) and serves with `python -m src.app`. The server then answers `/healthz`, the chat
page and one streamed chat turn against the Claude fake, and its whole process group is stopped.
The second test breaks that venv by hand and checks that `scripts/setup.sh` repairs it although
its install stamp is there.

The slowest tests of the suite by design (a venv and two pip installs from pip's cache: about
1.5 minutes on the shared 2-core machine at load average 7, 6 at 15; docs/development.md#tests).
"""
import http.client
import io
import os
import signal
import subprocess
import tarfile
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.chat.chat_support import SseStream
from tests.fakes.claude import replies
from tests.robustness.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
SERVE = "bash scripts/serve.sh"
KEY = "sk-ant-api03-fresh-clone-0123456789abcdefghijCLNE"
SETUP_SECONDS = 600  # venv, pip install (from pip's cache) and gunicorn's start: a deadline only
STOP_SECONDS = 30
REPLY = "Hello from a fresh clone."


def _git(*args: str, cwd: Path = ROOT, data: bytes | None = None) -> bytes:
    # no optional locks: reading the tree must never take the index lock of the developer's repo
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(["git", *args], cwd=cwd, input=data, env=env, check=True,
                          capture_output=True).stdout


def copy_working_tree(dest: Path) -> None:
    """HEAD's files, then the uncommitted changes to tracked files applied on top."""
    with tarfile.open(fileobj=io.BytesIO(_git("archive", "--format=tar", "HEAD"))) as tar:
        tar.extractall(dest, filter="data")
    changes = _git("diff", "--binary", "HEAD")
    if changes:
        _git("apply", "--whitespace=nowarn", "-", cwd=dest, data=changes)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The working tree as a fresh clone would have it, shared by this module's tests."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: there is no committed tree to clone")
    dest = tmp_path_factory.mktemp("clone")
    copy_working_tree(dest)
    return dest


def _user_environment(**extra: str) -> dict:
    """The environment of someone who just cloned the repository: no venv active, no setting of
    this app or of its providers inherited from the shell running the suite."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
           and not name.startswith(("PERSONA_", "ANTHROPIC_", "OPENAI_"))}
    return {**env, **extra}


class Serving:
    """`bash scripts/serve.sh` in its own process group; `stop()` ends every process in it."""

    def __init__(self, clone: Path, log_path: Path, env: dict):
        self.port = int(env["PERSONA_PORT"])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop(), it outlives __init__
        self.proc = subprocess.Popen(["bash", "-c", SERVE], cwd=clone, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        """What serve.sh (setup, pip, gunicorn) printed so far."""
        return self.log_path.read_text(errors="replace")

    def wait_until_up(self) -> float:
        """Polls /healthz until it answers (the script has no readiness event); the seconds it
        took."""
        started = time.monotonic()
        while True:
            try:
                if _status(self.port, "/healthz") == 200:
                    return time.monotonic() - started
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise AssertionError(f"{SERVE} exited ({self.proc.returncode}):\n{self.output()}")
            if time.monotonic() - started > SETUP_SECONDS:
                raise AssertionError(f"{SERVE} did not serve within {SETUP_SECONDS} s:\n"
                                     f"{self.output()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM to the whole group (gunicorn's master and workers, or pip mid-install), SIGKILL
        after a grace; returns once no process of the group is left."""
        _signal_group(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        deadline = time.monotonic() + STOP_SECONDS
        while _group_alive(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # workers exit after their master; nothing to wait on but the group
        if _group_alive(self.proc.pid):
            _signal_group(self.proc.pid, signal.SIGKILL)
        self._log.close()
        self.proc.__exit__(None, None, None)


def _status(port: int, path: str) -> int:
    with closing(http.client.HTTPConnection("127.0.0.1", port, timeout=10)) as conn:
        conn.request("GET", path)
        with conn.getresponse() as response:
            response.read()
            return response.status


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_readme_serve_command_serves_a_chat_from_a_fresh_clone(clone, tmp_path, claude,
                                                                      key_hygiene):
    readme = (clone / "README.md").read_text(encoding="utf-8")
    assert f"\n{SERVE}   #" in readme, "the README's serve command changed: change this test too"
    key_hygiene.add_secret(KEY)
    claude.default = replies.scripted(lambda body: replies.text(REPLY))
    data_dir = tmp_path / "data"
    env = _user_environment(PERSONA_PORT=str(free_port()), PERSONA_DATA_DIR=str(data_dir),
                            ANTHROPIC_BASE_URL=claude.url, ANTHROPIC_API_KEY=KEY)
    server = Serving(clone, tmp_path / "serve.log", env)
    try:
        seconds = server.wait_until_up()
        print(f"{SERVE} served a fresh clone after {seconds:.1f} s")
        with SseStream(server.url, "/", None, method="GET") as page:
            assert page.status == 200 and page.content_type.startswith("text/html")
            assert b"<html" in page.response.read()
        with SseStream(server.url, "/api/sessions", {"persona_id": "default"}) as created:
            assert created.status == 201, created.json()
            session = created.json()["id"]
        with SseStream(server.url, "/api/chat/stream",
                       {"session_id": session, "message": "Hi!"}) as stream:
            assert stream.status == 200 and stream.content_type.startswith("text/event-stream")
            events = stream.events()
    finally:
        server.stop()
    assert not _group_alive(server.proc.pid), "a process of serve.sh outlived the stop"
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done", events
    assert "".join(data["text"] for kind, data in events if kind == "chunk") == REPLY
    assert "Hi!" in str(claude.requests[0].messages[-1]), "the turn reached the fake"
    key_hygiene.add_data_dir(data_dir)
    key_hygiene.scan("serve.sh output", server.output())


def test_setup_repairs_a_venv_that_cannot_import_the_app(clone):
    env = _user_environment()
    setup = ["bash", "scripts/setup.sh"]
    subprocess.run(setup, cwd=clone, env=env, check=True, capture_output=True)
    python = str(clone / ".venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "packaging"],
                   cwd=clone, env=env, check=True, capture_output=True)
    broken = subprocess.run([python, "-c", "import src.server"], cwd=clone, env=env,
                            capture_output=True, text=True, check=False)
    assert "No module named 'packaging'" in broken.stderr
    assert list((clone / ".venv").glob(".installed-*")), "the install stamp is there"

    subprocess.run(setup, cwd=clone, env=env, check=True, capture_output=True)
    subprocess.run([python, "-c", "import src.server, src.app"], cwd=clone, env=env, check=True)
