"""The composition root: builds every service once per app and hands them out.

Routes call the `get_*` accessors; nothing else constructs services. Each service is built by
its own `_build_*` step so the wiring order stays readable.
"""
import atexit
import logging
import os

from flask import Flask, current_app

from .api_request import ApiClient
from .cortex import CortexService
from .cortex.service import DEFAULT_BUDGET
from .cortex.trigger import CortexTrigger
from .cortex.ownership import ProcessOwner
from .cortex.update import CortexUpdateService
from .cortex.worker import LEASE_SECONDS, CortexWorker
from .logsafe import register_secret
from .services.access import FAILURE_LIMIT, FAILURE_WINDOW, AccessGate, FailureLimiter
from .services.chat_service import ChatService
from .services.chat_titles import TitleGenerator
from .services.persona_service import PersonaService
from .services.secrets import SecretStore
from .services.session_leases import SessionLeases
from .services.session_service import SessionService
from .services.settings_service import SettingsService
from .storage import Database
from .storage.settings import get_setting

log = logging.getLogger(__name__)
EXTENSION = "persona_cortex"


def init_services(app: Flask) -> dict:
    """Builds all services for `app` in dependency order and stores them on `app.extensions`."""
    config = app.config
    os.makedirs(config["DATA_DIR"], exist_ok=True)
    services: dict = {"config": config}
    services["db"] = Database(os.path.join(config["DATA_DIR"], "app.db"))
    services["cortex"] = _build_cortex(config, services["db"])
    services["secrets"] = SecretStore(config["DATA_DIR"])
    services.update(_build_access(config))
    services["api_client"] = _build_api_client(config, services["secrets"])
    services["settings"] = _build_settings_service(config, services)
    services["personas"] = _build_persona_service(services)
    services["sessions"] = SessionService(services["db"])
    services.update(_build_cortex_updates(config, services))
    services["session_leases"] = SessionLeases(config["DATA_DIR"])
    services["chat"] = _build_chat_service(services)
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


def _build_access(config) -> dict:
    """The access token gate and the per-address failure limiter (DESIGN §9)."""
    token = config.get("ACCESS_TOKEN") or None
    register_secret(token)
    if token and len(token) < 16:
        log.warning("PERSONA_ACCESS_TOKEN is short: use at least 16 random characters")
    limiter = FailureLimiter(int(config.get("ACCESS_FAILURE_LIMIT", FAILURE_LIMIT)),
                             float(config.get("ACCESS_FAILURE_WINDOW", FAILURE_WINDOW)))
    return {"access_gate": AccessGate(token), "access_limiter": limiter}


def _build_settings_service(config, services: dict) -> SettingsService:
    """The model default and the environment's key come from config; the rest from SQLite."""
    return SettingsService(services["db"], services["secrets"], services["api_client"],
                           default_model=config["MODEL"],
                           env_api_key=config.get("ANTHROPIC_API_KEY"))


def _build_persona_service(services: dict) -> PersonaService:
    """Seeds the shipped default persona (in the configured language) so one always exists."""
    personas = PersonaService(services["db"], services["cortex"])
    personas.ensure_default(services["settings"].values()["language"])
    return personas


def _build_cortex(config, db: Database) -> CortexService:
    """Templates follow the "app" settings (language, user name); `default` exists at start-up."""
    cortex = CortexService(config["DATA_DIR"], db,
                           settings=lambda: get_setting(db.conn(), "app", {}),
                           budget=int(config.get("CORTEX_BUDGET", DEFAULT_BUDGET)))
    cortex.ensure_cortex_files("default")
    return cortex


def _build_cortex_updates(config, services: dict) -> dict:
    """Update service, worker and trigger; the worker thread runs only if CORTEX_WORKER is set.

    The worker owns the jobs it claims through this app's `ProcessOwner` (a lock file held
    while the process lives) and renews their lease (`CORTEX_JOB_LEASE` seconds).
    """
    db = services["db"]
    owner = ProcessOwner(config["DATA_DIR"])
    owner.sweep()

    def app_settings() -> dict:
        return get_setting(db.conn(), "app", {})

    update = CortexUpdateService(services["api_client"], services["cortex"], db, app_settings,
                                 default_model=config["MODEL"])
    worker = CortexWorker(db, update, owner,
                          lease_seconds=float(config.get("CORTEX_JOB_LEASE", LEASE_SECONDS)))
    worker.recover_interrupted()
    trigger = CortexTrigger(db, worker, app_settings)
    if config.get("CORTEX_WORKER"):
        worker.start(tick=trigger.scan_idle)
        atexit.register(worker.stop)
    return {"update": update, "cortex_worker": worker, "cortex_trigger": trigger,
            "job_owner": owner}


def _build_chat_service(services: dict) -> ChatService:
    """Chat streams through the shared ApiClient; titles are written in the background; one
    reply per session at a time, across worker processes."""
    titles = TitleGenerator(services["db"], services["api_client"], services["sessions"],
                            services["settings"])
    chat = ChatService(services["db"], services["api_client"], services["cortex"],
                       services["settings"], services["session_leases"], titles=titles,
                       trigger=services["cortex_trigger"].check_and_trigger,
                       status=services["cortex_trigger"].status)
    settled = chat.recover_orphans()
    if settled:
        log.warning("Marked %d reply(s) left streaming by a stopped process as incomplete",
                    settled)
    return chat


def shutdown_services(app: Flask) -> None:
    """Stops the cortex worker and closes the API client's connections (tests, clean exits)."""
    services = app.extensions.get(EXTENSION) or {}
    if services.get("chat") is not None:
        services["chat"].close()
    if services.get("cortex_worker") is not None:
        services["cortex_worker"].stop()
    if services.get("api_client") is not None:
        services["api_client"].close()
    if services.get("session_leases") is not None:
        services["session_leases"].close()
    if services.get("job_owner") is not None:
        services["job_owner"].close()


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


def get_persona_service(app: Flask | None = None) -> PersonaService:
    """Persona CRUD (creates and removes cortex directories alongside)."""
    return _get("personas", app)


def get_session_service(app: Flask | None = None) -> SessionService:
    """Sessions and their paginated messages."""
    return _get("sessions", app)


def get_settings_service(app: Flask | None = None) -> SettingsService:
    """General settings and the API key."""
    return _get("settings", app)


def get_cortex_service(app: Flask | None = None) -> CortexService:
    """The cortex store (files, revisions, per-persona locks)."""
    return _get("cortex", app)


def get_chat_service(app: Flask | None = None) -> ChatService:
    """Chat turns as event streams, for the WebSocket and SSE routes."""
    return _get("chat", app)


def get_title_generator(app: Flask | None = None) -> TitleGenerator:
    """Writes session titles in the background; the WebSocket listens for them."""
    return get_chat_service(app).titles


def get_update_service(app: Flask | None = None) -> CortexUpdateService:
    """Runs one cortex update (tool_use) for a persona."""
    return _get("update", app)


def get_cortex_trigger(app: Flask | None = None) -> CortexTrigger:
    """Decides when a persona's cortex is due and queues updates."""
    return _get("cortex_trigger", app)


def get_cortex_worker(app: Flask | None = None) -> CortexWorker:
    """Runs queued cortex updates; `subscribe` reports finished jobs."""
    return _get("cortex_worker", app)


def get_access_gate(app: Flask | None = None) -> AccessGate:
    """Checks the access token and the sign-in cookie."""
    return _get("access_gate", app)


def get_failure_limiter(app: Flask | None = None) -> FailureLimiter:
    """Counts failed sign-ins per client address."""
    return _get("access_limiter", app)
