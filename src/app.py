"""App factory and the `python -m src.app` entry (gunicorn with threads, so WebSockets work)."""
import ipaddress
import logging
import sys

from flask import Flask

from . import config as config_module
from .routes import chat, cortex, health, messages, pages, personas, sessions, settings
from .routes import cortex_jobs, openapi
from .routes.errors import register_error_handlers
from .routes.ws import sock
from .utils import provider
from .utils.logsafe import configure_logging

log = logging.getLogger(__name__)
BLUEPRINTS = (health.bp, pages.bp, chat.bp, personas.bp, sessions.bp, cortex.bp, settings.bp,
              messages.bp, cortex_jobs.bp, openapi.bp)


def create_app(config: dict | None = None) -> Flask:
    """Wires config → storage → services → blueprints; `config` replaces the environment."""
    app = Flask(__name__, instance_relative_config=False)
    app.config.update(config_module.load(app.instance_path, config))
    configure_logging(app.config["LOG_LEVEL"])
    provider.init_services(app)
    register_error_handlers(app)
    app.url_map.merge_slashes = False
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    sock.init_app(app)
    return app


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main() -> int:
    """Serves the app with gunicorn (threaded workers, which flask-sock supports)."""
    from gunicorn.app.base import BaseApplication

    app = create_app()
    host, port = app.config["HOST"], int(app.config["PORT"])
    if not is_loopback(host) and not app.config.get("ACCESS_TOKEN"):
        log.error("Refusing to listen on %s without PERSONA_ACCESS_TOKEN (see README, Security)",
                  host)
        return 2

    class _Server(BaseApplication):
        def load_config(self):
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", 1)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("threads", 64)
            self.cfg.set("timeout", 120)
            self.cfg.set("accesslog", "-")

        def load(self):
            return app

    log.info("Persona Cortex on http://%s:%d", host, port)
    _Server().run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
