"""The composition root: builds every service once per app and hands them out.

Routes call the `get_*` accessors; nothing else constructs services. Each service is built by
its own `_build_*` step so the wiring order stays readable.
"""
import logging
import os

from flask import Flask, current_app

from .api_request import ApiClient
from .logsafe import register_secret
from .services.secrets import SecretStore
from .storage import Database

log = logging.getLogger(__name__)
EXTENSION = "persona_cortex"


def init_services(app: Flask) -> dict:
    """Builds all services for `app` in dependency order and stores them on `app.extensions`."""
    config = app.config
    os.makedirs(config["DATA_DIR"], exist_ok=True)
    services: dict = {"config": config}
    services["db"] = Database(os.path.join(config["DATA_DIR"], "app.db"))
    services["secrets"] = SecretStore(config["DATA_DIR"])
    services["api_client"] = _build_api_client(config, services["secrets"])
    app.extensions[EXTENSION] = services
    return services


def _build_api_client(config, secrets: SecretStore) -> ApiClient:
    """A key stored through the UI wins over `ANTHROPIC_API_KEY`."""
    key = secrets.load_api_key() or config.get("ANTHROPIC_API_KEY")
    register_secret(key)
    return ApiClient(
        api_key=key,
        base_url=config.get("ANTHROPIC_BASE_URL"),
        timeout=float(config["ANTHROPIC_TIMEOUT"]),
        max_retries=int(config["ANTHROPIC_MAX_RETRIES"]),
        default_model=config["MODEL"],
    )


def _get(name: str, app: Flask | None = None):
    services = (app or current_app).extensions.get(EXTENSION)
    if services is None or services.get(name) is None:
        raise RuntimeError(f"{name} is not initialised: call init_services(app) in create_app()")
    return services[name]


def get_db(app: Flask | None = None) -> Database:
    """The app's database."""
    return _get("db", app)


def get_secret_store(app: Flask | None = None) -> SecretStore:
    """Where the UI-entered API key lives."""
    return _get("secrets", app)


def get_api_client(app: Flask | None = None) -> ApiClient:
    """The one ApiClient of this app."""
    return _get("api_client", app)
