"""What the app leaves on the machine: owner-only data, no runtime files outside the data
directory, no prompts in DEBUG logs unless asked for, no noise when a socket goes away early."""
import logging
import os
import socket
import stat

import pytest
from simple_websocket import ConnectionClosed

from src.app import create_app
from src.utils import provider
from src.utils.logsafe import PROMPT_LOGGERS
from src.utils.services.chat_socket import run_chat_socket
from tests.chat.chat_support import SseStream
from tests.fakes.claude import replies
from tests.robustness.servers import ServerProcess
from tests.support.flocks import wait_until

CONVERSATION_MARKER = "zebra-marker-4471"
CORTEX_MARKER = "cortex-marker-9931"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_at_warning_the_server_writes_no_access_log(data_dir, tmp_path):
    with ServerProcess(data_dir, tmp_path / "server.log", PERSONA_WORKERS="1") as server:
        assert server.call("GET", "/healthz")[0] == 200
    assert "GET /healthz" not in server.log()  # the server has stopped: every line is written


def test_the_database_and_the_data_directory_are_owner_only(app_config, tmp_path):
    data_dir = tmp_path / "fresh"
    app = create_app({**app_config, "DATA_DIR": str(data_dir)})
    try:
        assert provider.get_persona_service(app).list()  # the database is open (WAL in use)
        assert _mode(data_dir) == 0o700
        for name in ("app.db", "app.db-wal", "app.db-shm"):
            assert _mode(data_dir / name) == 0o600, name
    finally:
        provider.shutdown_services(app)


def test_an_existing_data_directory_and_database_are_tightened(app_config, data_dir):
    os.chmod(data_dir, 0o755)
    (data_dir / "app.db").touch(mode=0o644)
    os.chmod(data_dir / "app.db", 0o644)
    provider.shutdown_services(create_app(app_config))
    assert _mode(data_dir) == 0o700 and _mode(data_dir / "app.db") == 0o600


def test_the_server_keeps_its_files_in_the_data_directory_and_owner_only(data_dir, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with ServerProcess(data_dir, tmp_path / "server.log", HOME=str(home),
                       PERSONA_WORKERS="1", PERSONA_LOG_LEVEL="INFO") as server:
        status, _, body = server.call("GET", "/healthz")  # `python -m src.app` serves
        assert (status, body) == (200, {"status": "ok"})
        assert server.call("GET", "/api/personas/default/cortex/memory.md")[0] == 200
        assert server.call("GET", "/api/personas?token=q5-secret-in-a-url")[0] == 200
        wait_until(lambda: "GET /api/personas?token=[redacted]" in server.log(),
                   what="the masked access log line")
        assert "q5-secret-in-a-url" not in server.log()
        assert list(home.iterdir()) == [], "the server wrote into the home directory"
        loose = [str(path) for path in data_dir.rglob("*") if _mode(path) & 0o077]
        assert loose == [], "readable by others"


@pytest.fixture
def debug_config(app_config, claude):
    claude.default = replies.scripted(lambda body: replies.text("Noted."))
    return {**app_config, "ANTHROPIC_API_KEY": "sk-ant-api03-debug-logs-0123456789",
            "ANTHROPIC_BASE_URL": claude.url, "LOG_LEVEL": "DEBUG"}


def _chat_and_collect_logs(server, client, caplog) -> str:
    etag = client.get("/api/personas/default/cortex/memory.md").headers["ETag"]
    client.put("/api/personas/default/cortex/memory.md", json={"content": CORTEX_MARKER},
               headers={"If-Match": etag})
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()["id"]
    with SseStream(server.url, "/api/chat/stream",
                   {"session_id": session, "message": CONVERSATION_MARKER}) as stream:
        assert stream.events()[-1][0] == "done"
    return "\n".join(record.getMessage() for record in caplog.records)


class TestDebugLogs:
    @pytest.fixture
    def app_config(self, debug_config):
        return debug_config

    def test_debug_logs_carry_no_prompt(self, server, client, caplog):
        logged = _chat_and_collect_logs(server, client, caplog)
        assert logging.getLogger().isEnabledFor(logging.DEBUG)
        assert CONVERSATION_MARKER not in logged and CORTEX_MARKER not in logged


class TestPromptLoggingSwitch:
    @pytest.fixture
    def app_config(self, debug_config):
        return {**debug_config, "LOG_PROMPTS": True}

    def test_the_documented_switch_logs_prompts(self, server, client, caplog):
        logged = _chat_and_collect_logs(server, client, caplog)
        assert CONVERSATION_MARKER in logged and CORTEX_MARKER in logged


class TestWarningLevel:
    @pytest.fixture
    def app_config(self, debug_config):
        return {**debug_config, "LOG_LEVEL": "WARNING"}

    def test_the_http_clients_are_as_quiet_as_the_level_asks(self, server, client, caplog):
        _chat_and_collect_logs(server, client, caplog)
        chatty = [f"{r.name}: {r.getMessage()}" for r in caplog.records
                  if r.levelno < logging.WARNING and r.name.split(".")[0] in PROMPT_LOGGERS]
        assert chatty == []


class _ClosedEarly:
    """A WebSocket whose client left right after the handshake: its socket is already closed."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.close()

    def receive(self, timeout=None):
        raise ConnectionClosed()

    def send(self, data):
        raise ConnectionClosed()


def test_a_websocket_closed_right_after_the_handshake_ends_quietly(app, caplog):
    run_chat_socket(_ClosedEarly(), provider.get_chat_service(app))
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


def test_an_unknown_log_level_is_told_and_info_is_used(caplog):
    from src.utils.logsafe import configure_logging
    root = logging.getLogger()
    saved = [root.level] + [logging.getLogger(name).level for name in PROMPT_LOGGERS]
    try:
        configure_logging("verbose")
        assert root.level == logging.INFO
        assert all(logging.getLogger(name).level == logging.INFO for name in PROMPT_LOGGERS)
        assert "Unknown log level 'verbose'" in caplog.text
        configure_logging("error")
        assert root.level == logging.ERROR
        assert logging.getLogger("httpx2").level == logging.ERROR
    finally:
        root.setLevel(saved[0])
        for name, level in zip(PROMPT_LOGGERS, saved[1:], strict=True):
            logging.getLogger(name).setLevel(level)
