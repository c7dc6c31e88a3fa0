"""App factory; `python -m src.app` runs the server (`serve.py`).

The entry check comes before the imports on purpose: gunicorn's master process only supervises,
so it imports gunicorn and the configuration, not the app (about 70 MiB less resident memory);
each worker imports and builds the app after the fork.
"""
from __future__ import annotations  # `Flask` in the entry block is imported only below it

import sys

if __name__ == "__main__":
    from .serve import main

    def _worker_app() -> Flask:
        """The app, built in each gunicorn worker after the fork (`serve.main` calls this):
        the runner does not import the app, and the master process never builds it."""
        from .app import create_app
        return create_app()
    sys.exit(main(_worker_app))

import logging

from flask import Flask

from . import config as config_module
from .routes import (
    access,
    branches,
    chat,
    cortex,
    cortex_jobs,
    cortex_review,
    cortex_sleep,
    health,
    learn,
    limits,
    messages,
    openapi,
    pages,
    personas,
    portability,
    search,
    sessions,
    settings,
    user_personas,
    world,
)
from .routes.errors import register_error_handlers
from .routes.ws import sock
from .serve import is_loopback  # noqa: F401  (re-exported: tests and callers use it here)
from .utils import provider
from .utils.logsafe import configure_logging

log = logging.getLogger(__name__)
BLUEPRINTS = (access.bp,  # first: its checks run before every other request hook
              health.bp, pages.bp, chat.bp, personas.bp, sessions.bp, cortex.bp, settings.bp,
              messages.bp, branches.bp, cortex_jobs.bp, cortex_review.bp, cortex_sleep.bp,
              limits.bp, search.bp, openapi.bp, portability.bp, world.bp,
              user_personas.bp, learn.bp)


def create_app(config: dict | None = None) -> Flask:
    """Wires config → storage → services → blueprints; `config` replaces the environment."""
    app = Flask(__name__, instance_relative_config=False)
    app.request_class = portability.MemoryUploadRequest
    app.config.update(config_module.load(app.instance_path, config))
    configure_logging(app.config["LOG_LEVEL"], bool(app.config.get("LOG_PROMPTS")))
    provider.init_services(app)
    register_error_handlers(app)
    app.url_map.merge_slashes = False
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    sock.init_app(app)
    return app
