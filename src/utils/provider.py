"""The composition root: builds every service once per app and hands them out.

Routes call the `get_*` accessors; nothing else constructs services. Each service is built by
its own `_build_*` step so the wiring order stays readable.
"""
import atexit
import logging
import os

from flask import Flask, current_app

from .api_request import PROVIDERS, ApiClient
from .cortex import CortexService
from .cortex.ownership import ProcessOwner
from .cortex.personas_lookup import persona_exists
from .cortex.review import ProposalService
from .cortex.service import DEFAULT_BUDGET
from .cortex.sleep import SleepSchedule
from .cortex.trigger import CortexTrigger
from .cortex.update import CortexUpdateService
from .cortex.worker import LEASE_SECONDS, CortexWorker
from .logsafe import register_secret
from .portability.backup_service import BackupService
from .portability.chat_import import ChatImportService
from .portability.service import CardService
from .services.access import (
    FAILURE_LIMIT,
    FAILURE_WINDOW,
    GLOBAL_FAILURE_LIMIT,
    AccessGate,
    FailureLimiter,
)
from .services.chat_service import ChatService
from .services.chat_titles import TitleGenerator
from .services.connection_test import ConnectionTester
from .services.conversation_tools import ConversationTools
from .services.persona_cleanup import PersonaCleanup
from .services.persona_service import PersonaService
from .services.prompt_inspector import PromptInspector
from .services.secrets import SecretStore
from .services.session_leases import SessionLeases
from .services.session_service import SessionService
from .services.settings_service import SettingsService
from .services.token_counter import BUDGET_SECONDS, TokenCounter
from .services.token_rules import checked_token
from .services.user_personas import UserPersonaService
from .services.world_books import WorldBookService
from .storage import Database, user_personas
from .storage.settings import get_setting

log = logging.getLogger(__name__)
EXTENSION = "persona_cortex"


def init_services(app: Flask) -> dict:
    """Builds all services for `app` in dependency order and stores them on `app.extensions`."""
    config = app.config
    register_secret(config.get("ACCESS_TOKEN"))
    config["ACCESS_TOKEN"] = checked_token(config.get("ACCESS_TOKEN"))  # before anything else
    _owner_only_dir(config["DATA_DIR"])
    services: dict = {"config": config}
    services["db"] = Database(os.path.join(config["DATA_DIR"], "app.db"))
    services["cortex"] = _build_cortex(config, services["db"])
    services["persona_cleanup"] = _build_cleanup(config, services)
    services["secrets"] = SecretStore(config["DATA_DIR"])
    services.update(_build_access(config, services["db"]))
    services["api_client"] = _build_api_client(config, services)
    services["settings"] = _build_settings_service(config, services)
    services["settings"].bind_stored_keys()
    services["connection_tester"] = ConnectionTester(services["settings"], services["api_client"])
    services["personas"] = _build_persona_service(services)
    services["cards"] = CardService(services["db"], services["cortex"], services["personas"])
    services["chat_import"] = ChatImportService(services["db"], services["personas"])
    services["world_books"] = WorldBookService(services["db"], services["personas"])
    services["user_personas"] = UserPersonaService(services["db"])
    services["backup"] = BackupService(config["DATA_DIR"], services["db"], services["cortex"])
    services["conversation_tools"] = ConversationTools(services["db"])
    services.update(_build_cortex_updates(config, services))
    services["sessions"] = SessionService(
        services["db"], retracted=services["cortex_trigger"].notice_retractions)
    services["session_leases"] = SessionLeases(config["DATA_DIR"])
    services["chat"] = _build_chat_service(services)
    services["prompt_inspector"] = PromptInspector(
        services["db"], services["sessions"], services["api_client"],
        TokenCounter(services["db"], services["api_client"],
                     float(config.get("COUNT_BUDGET_SECONDS", BUDGET_SECONDS))))
    app.extensions[EXTENSION] = services
    return services


def _owner_only_dir(path: str) -> None:
    """The data directory holds memories and keys: only its owner may list or enter it."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o700)


def _build_api_client(config, services: dict) -> ApiClient:
    """The provider, base URL, window and the key that belongs to that URL (a stored key, else
    the environment's; key_ring.py) come from the settings service before every request, so a
    key set or removed through any worker process counts in all of them."""
    register_secret(config.get("ANTHROPIC_API_KEY"))
    register_secret(config.get("OPENAI_API_KEY"))
    return ApiClient(
        base_url=config.get("ANTHROPIC_BASE_URL"),
        timeout=float(config["ANTHROPIC_TIMEOUT"]),
        max_retries=int(config["ANTHROPIC_MAX_RETRIES"]),
        default_model=config["MODEL"],
        connection_source=lambda: services["settings"].connection(),
    )


def _build_access(config, db: Database) -> dict:
    """The access token gate (the token passed token_rules in init_services) and the failure
    limiter, per address and across all addresses and worker processes (DESIGN §9)."""
    token = config.get("ACCESS_TOKEN")
    register_secret(token)
    limiter = FailureLimiter(
        db, int(config.get("ACCESS_FAILURE_LIMIT", FAILURE_LIMIT)),
        float(config.get("ACCESS_FAILURE_WINDOW", FAILURE_WINDOW)),
        int(config.get("ACCESS_FAILURE_GLOBAL_LIMIT", GLOBAL_FAILURE_LIMIT)))
    return {"access_gate": AccessGate(token), "access_limiter": limiter}


def _build_settings_service(config, services: dict) -> SettingsService:
    """The model default and the environment's key come from config; the rest from SQLite."""
    provider = config.get("PROVIDER") or "anthropic"
    if provider not in PROVIDERS:
        raise ValueError(f"PERSONA_PROVIDER must be one of {', '.join(PROVIDERS)}")
    return SettingsService(services["db"], services["secrets"], services["api_client"],
                           default_model=config["MODEL"],
                           env_api_key=config.get("ANTHROPIC_API_KEY"), provider=provider,
                           env_keys={"openai_compatible": config.get("OPENAI_API_KEY") or None},
                           env_base_urls={"anthropic": config.get("ANTHROPIC_BASE_URL") or None,
                                          "openai_compatible": config.get("OPENAI_BASE_URL")
                                          or None})


def _build_persona_service(services: dict) -> PersonaService:
    """Seeds the shipped default persona (in the configured language) so one always exists."""
    personas = PersonaService(services["db"], services["cortex"], services["persona_cleanup"])
    personas.ensure_default(services["settings"].values()["language"])
    return personas


def _build_cortex(config, db: Database) -> CortexService:
    """Templates follow the "app" settings (language, user name); `default` exists at start-up."""
    cortex = CortexService(config["DATA_DIR"], db,
                           settings=lambda: get_setting(db.conn(), "app", {}),
                           budget=int(config.get("CORTEX_BUDGET", DEFAULT_BUDGET)),
                           exists=lambda persona_id: persona_exists(db.conn(), persona_id))
    cortex.ensure_cortex_files("default")
    return cortex


def _build_cleanup(config, services: dict) -> PersonaCleanup:
    """Finishes deletions a crash interrupted and removes orphans, before any request."""
    cleanup = PersonaCleanup(services["db"], services["cortex"], config["DATA_DIR"])
    cleanup.recover()
    return cleanup


def _build_cortex_updates(config, services: dict) -> dict:
    """Update service, worker and trigger; the worker thread runs only if CORTEX_WORKER is set.

    The worker owns the jobs it claims through this app's `ProcessOwner` (a lock file held
    while the process lives) and renews their lease (`CORTEX_JOB_LEASE` seconds).
    """
    db = services["db"]
    owner = ProcessOwner(config["DATA_DIR"])
    owner.sweep()

    def app_settings() -> dict:
        """The stored "app" settings, `user_name` read from the default user persona (as
        SettingsService.values() does), so memory runs name the person as the chat does."""
        conn = db.conn()
        values = get_setting(conn, "app", {})
        values = values if isinstance(values, dict) else {}
        default = user_personas.get_default(conn)
        return {**values, "user_name": default["name"]} if default else values

    proposals = ProposalService(services["cortex"], db)
    update = CortexUpdateService(services["api_client"], services["cortex"], db, app_settings,
                                 default_model=config["MODEL"], proposals=proposals)
    worker = CortexWorker(db, update, owner,
                          lease_seconds=float(config.get("CORTEX_JOB_LEASE", LEASE_SECONDS)))
    worker.recover_interrupted()
    trigger = CortexTrigger(db, worker, app_settings)
    sleep = SleepSchedule(db, worker, services["cortex"].budget)
    if config.get("CORTEX_WORKER"):
        worker.start(tick=lambda: (trigger.scan_idle(), trigger.scan_retractions(),
                                   sleep.scan()))
        atexit.register(worker.stop)
    return {"update": update, "cortex_worker": worker, "cortex_trigger": trigger,
            "job_owner": owner, "proposals": proposals, "sleep": sleep}


def _build_chat_service(services: dict) -> ChatService:
    """Chat streams through the shared ApiClient; titles are written in the background; one
    reply per session at a time, across worker processes."""
    titles = TitleGenerator(services["db"], services["api_client"], services["sessions"],
                            services["settings"])
    chat = ChatService(services["db"], services["api_client"], services["cortex"],
                       services["settings"], services["session_leases"], titles=titles,
                       trigger=services["cortex_trigger"].check_and_trigger,
                       retracted=services["cortex_trigger"].notice_retractions,
                       status=services["cortex_trigger"].status)
    settled = chat.recover_orphans()
    if settled:
        log.warning("Marked %d reply(s) left streaming by a stopped process as incomplete",
                    settled)
    return chat


def shutdown_services(app: Flask) -> None:
    """Stops the cortex worker, closes the API client's connections and the database's idle
    ones (tests, clean exits)."""
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
    if services.get("db") is not None:
        services["db"].close()


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


def get_card_service(app: Flask | None = None) -> CardService:
    """Character card import/export and avatars."""
    return _get("cards", app)


def get_chat_import_service(app: Flask | None = None) -> ChatImportService:
    """Chat files (SillyTavern `.jsonl`, our JSON export) into conversations."""
    return _get("chat_import", app)


def get_world_book_service(app: Flask | None = None) -> WorldBookService:
    """Lorebooks (world info): books, entries, and which personas use them."""
    return _get("world_books", app)


def get_user_persona_service(app: Flask | None = None) -> UserPersonaService:
    """User personas ("About you"): who the person is in each conversation."""
    return _get("user_personas", app)


def get_backup_service(app: Flask | None = None) -> BackupService:
    """Whole-app backups (the Settings → Data download)."""
    return _get("backup", app)


def get_session_service(app: Flask | None = None) -> SessionService:
    """Sessions and their paginated messages."""
    return _get("sessions", app)


def get_prompt_inspector(app: Flask | None = None) -> PromptInspector:
    """Recorded requests of replies, in sections with token counts."""
    return _get("prompt_inspector", app)


def get_conversation_tools(app: Flask | None = None) -> ConversationTools:
    """Search across a persona's sessions and export of one session."""
    return _get("conversation_tools", app)


def get_settings_service(app: Flask | None = None) -> SettingsService:
    """General settings and the API key."""
    return _get("settings", app)


def get_connection_tester(app: Flask | None = None) -> ConnectionTester:
    """Probes an endpoint for Settings → Test connection."""
    return _get("connection_tester", app)


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


def get_proposal_service(app: Flask | None = None) -> ProposalService:
    """Review mode: a persona's proposals (accept, edit, reject)."""
    return _get("proposals", app)


def get_sleep_schedule(app: Flask | None = None) -> SleepSchedule:
    """Consolidation ("sleep"): when it is due, and "consolidate now"."""
    return _get("sleep", app)


def get_access_gate(app: Flask | None = None) -> AccessGate:
    """Checks the access token and the sign-in cookie."""
    return _get("access_gate", app)


def get_failure_limiter(app: Flask | None = None) -> FailureLimiter:
    """Counts failed sign-ins per client address."""
    return _get("access_limiter", app)
