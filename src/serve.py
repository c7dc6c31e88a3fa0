"""`python -m src.app`: checks the settings, then runs gunicorn (worker model: `server.py`).

Imports stay light here: this runs in gunicorn's master process, which never builds the app.
"""
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from flask import Flask

from . import commands, config as config_module, server
from .utils.logsafe import configure_logging, register_secret
from .utils.services.origins import is_loopback
from .utils.services.token_rules import WeakToken, checked_token

log = logging.getLogger(__name__)


def main(load_app: Callable[[], Flask], argv: list[str] | None = None) -> int:
    """Serves the app with gunicorn (gevent workers, see `server.py`); `backup` and
    `restore` run those commands instead (see utils/portability/cli.py), and `--help` prints
    the usage of all three (`commands.py`) without reading a setting.

    Each worker process builds its own app after the fork (`load_app`, handed in by `app.py`,
    so this runner does not import the app it serves), so its SQLite connections and
    its cortex worker thread live in the process that serves the requests (a thread started before
    the fork would stay in the master and see new jobs only when it polls). `PERSONA_WORKERS`
    (default 2, one per core of a small machine) sets how many worker processes share the data
    directory. Cortex updates and session titles run in one more process the master starts
    and keeps (`memory_supervisor.py`), so the workers only chat; `PERSONA_MEMORY_PROCESS=0`
    runs them in the workers instead (the earlier model, for comparisons).
    """
    from gunicorn.app.base import BaseApplication

    argv = sys.argv[1:] if argv is None else argv
    command = commands.parse(argv).command
    config = config_module.load(Flask(__name__).instance_path, None)
    configure_logging(config["LOG_LEVEL"], bool(config.get("LOG_PROMPTS")))
    register_secret(config.get("ACCESS_TOKEN"))
    if command != "serve":
        return _portability_command(argv, config["DATA_DIR"])
    host, port = config["HOST"], int(config["PORT"])
    workers = os.environ.get("PERSONA_WORKERS", "2")
    model = os.environ.get("PERSONA_SERVER_MODEL", "gevent")
    header_text = os.environ.get("PERSONA_HEADER_TIMEOUT", str(server.HEADER_SECONDS))
    if model not in ("gevent", "gthread") or not header_text.isdigit() \
            or int(header_text) < 1:
        log.error("PERSONA_SERVER_MODEL must be gevent or gthread and PERSONA_HEADER_TIMEOUT "
                  "a whole number of seconds of at least 1")
        return 2
    header_seconds = int(header_text)
    if not workers.isdigit() or int(workers) < 1:
        log.error("PERSONA_WORKERS must be a whole number of at least 1, not %r", workers)
        return 2
    memory_process = os.environ.get("PERSONA_MEMORY_PROCESS", "1")
    if memory_process not in ("0", "1"):
        log.error("PERSONA_MEMORY_PROCESS must be 1 (the default) or 0, not %r", memory_process)
        return 2
    os.environ["PERSONA_MEMORY_PROCESS"] = memory_process  # read by each worker's create_app
    try:
        config["ACCESS_TOKEN"] = checked_token(config.get("ACCESS_TOKEN"))
    except WeakToken as err:
        log.error("%s", err)
        return 2
    if not is_loopback(host) and not config.get("ACCESS_TOKEN"):
        log.error("Refusing to listen on %s without PERSONA_ACCESS_TOKEN (see docs/security.md)",
                  host)
        return 2

    class _Server(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", int(workers))
            for name, value in server.options(model, header_seconds, int(workers)).items():
                self.cfg.set(name, value)
            if logging.getLogger().isEnabledFor(logging.INFO):  # WARNING and above: quiet
                self.cfg.set("accesslog", "-")
            self.cfg.set("control_socket_disable", True)  # it would go to ~/.gunicorn, shared

        def load(self) -> Any:
            """The Flask app (typed Any: gunicorn's stubs type a WSGI app's start_response as a
            Callable, which Flask's typeshed protocol for it does not match)."""
            return load_app()

        def run(self) -> None:
            if memory_process == "0":
                return super().run()
            from .memory_supervisor import SupervisingArbiter
            return SupervisingArbiter(self).run()

    log.info("Persona Cortex on http://%s:%d", host, port)
    os.umask(0o077)  # everything the server creates in the data directory is owner-only
    _Server().run()
    return 0


def _portability_command(argv: list[str], data_dir: str) -> int:
    """`backup` or `restore` with their arguments (`argv` as typed after `python -m src.app`)."""
    from .utils.portability import cli
    from .utils.portability.backup_service import BackupService

    def refresh() -> None:
        service = BackupService.for_data_dir(data_dir)
        service.refresh()
    return cli.run(commands.parse(argv), data_dir, refresh)
