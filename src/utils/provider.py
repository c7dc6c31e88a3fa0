"""The app's services in Flask: `init_services` builds and starts them (services_root.py) and
keeps them on `app.extensions`; routes reach them through the typed `get_*` accessors.

Nothing else constructs services. The accessors are shims over the one `Services` value, kept
because every route and many tests call them; new code may take `services_of(app)` instead.
"""
from flask import Flask, current_app

from .api_request import ApiClient
from .cortex import CortexService
from .cortex.review import ProposalService
from .cortex.sleep import SleepSchedule
from .cortex.trigger import CortexTrigger
from .cortex.update import CortexUpdateService
from .cortex.worker import CortexWorker
from .portability.backup_service import BackupService
from .portability.chat_import import ChatImportService
from .portability.service import CardService
from .services.access import AccessGate, FailureLimiter
from .services.chat_service import ChatService
from .services.chat_titles import TitleGenerator
from .services.connection_test import ConnectionTester
from .services.conversation_tools import ConversationTools
from .services.history_learning import HistoryLearning
from .services.memory_settings import MemorySettings
from .services.persona_service import PersonaService
from .services.prompt_inspector import PromptInspector
from .services.secrets import SecretStore
from .services.session_service import SessionService
from .services.settings_service import SettingsService
from .services.user_personas import UserPersonaService
from .services.world_books import WorldBookService
from .services_root import Services, build_services, start, stop
from .storage import Database

EXTENSION = "persona_cortex"


def init_services(app: Flask) -> Services:
    """Builds the services for `app.config`, starts them (recovery, seeding, the worker) and
    keeps them on `app.extensions`; a start that fails stops what it began."""
    services = build_services(app.config)
    try:
        start(services)
    except BaseException:
        stop(services)
        raise
    app.extensions[EXTENSION] = services
    return services


def shutdown_services(app: Flask) -> None:
    """Stops the cortex worker, closes the API client's connections and the database's idle
    ones (tests, clean exits)."""
    services = app.extensions.get(EXTENSION)
    if services is not None:
        stop(services)


def services_of(app: Flask | None = None) -> Services:
    """The services of `app` (default: the current app)."""
    services = (app or current_app).extensions.get(EXTENSION)
    if services is None:
        raise RuntimeError("services are not initialised: call init_services(app) in create_app()")
    return services


def get_db(app: Flask | None = None) -> Database:
    """The app's database."""
    return services_of(app).db


def get_secret_store(app: Flask | None = None) -> SecretStore:
    """Where the UI-entered API key lives."""
    return services_of(app).secrets


def get_api_client(app: Flask | None = None) -> ApiClient:
    """The one ApiClient of this app."""
    return services_of(app).api_client


def get_persona_service(app: Flask | None = None) -> PersonaService:
    """Persona CRUD (creates and removes cortex directories alongside)."""
    return services_of(app).personas


def get_card_service(app: Flask | None = None) -> CardService:
    """Character card import/export and avatars."""
    return services_of(app).cards


def get_chat_import_service(app: Flask | None = None) -> ChatImportService:
    """Chat files (SillyTavern `.jsonl`, our JSON export) into conversations."""
    return services_of(app).chat_import


def get_world_book_service(app: Flask | None = None) -> WorldBookService:
    """Lorebooks (world info): books, entries, and which personas use them."""
    return services_of(app).world_books


def get_user_persona_service(app: Flask | None = None) -> UserPersonaService:
    """User personas ("About you"): who the person is in each conversation."""
    return services_of(app).user_personas


def get_backup_service(app: Flask | None = None) -> BackupService:
    """Whole-app backups (the Settings → Data download)."""
    return services_of(app).backup


def get_session_service(app: Flask | None = None) -> SessionService:
    """Sessions and their paginated messages."""
    return services_of(app).sessions


def get_prompt_inspector(app: Flask | None = None) -> PromptInspector:
    """Recorded requests of replies, in sections with token counts."""
    return services_of(app).prompt_inspector


def get_conversation_tools(app: Flask | None = None) -> ConversationTools:
    """Search across a persona's sessions and export of one session."""
    return services_of(app).conversation_tools


def get_settings_service(app: Flask | None = None) -> SettingsService:
    """General settings and the API key."""
    return services_of(app).settings


def get_memory_settings(app: Flask | None = None) -> MemorySettings:
    """The cortex settings and each persona's memory settings."""
    return services_of(app).memory_settings


def get_connection_tester(app: Flask | None = None) -> ConnectionTester:
    """Probes an endpoint for Settings → Test connection."""
    return services_of(app).connection_tester


def get_cortex_service(app: Flask | None = None) -> CortexService:
    """The cortex store (files, revisions, per-persona locks)."""
    return services_of(app).cortex


def get_chat_service(app: Flask | None = None) -> ChatService:
    """Chat turns as event streams, for the WebSocket and SSE routes."""
    return services_of(app).chat


def get_title_generator(app: Flask | None = None) -> TitleGenerator:
    """Writes session titles in the background; the WebSocket listens for them."""
    return services_of(app).titles


def get_update_service(app: Flask | None = None) -> CortexUpdateService:
    """Runs one cortex update (tool_use) for a persona."""
    return services_of(app).update


def get_cortex_trigger(app: Flask | None = None) -> CortexTrigger:
    """Decides when a persona's cortex is due and queues updates."""
    return services_of(app).cortex_trigger


def get_cortex_worker(app: Flask | None = None) -> CortexWorker:
    """Runs queued cortex updates; `subscribe` reports finished jobs."""
    return services_of(app).cortex_worker


def get_proposal_service(app: Flask | None = None) -> ProposalService:
    """Review mode: a persona's proposals (accept, edit, reject)."""
    return services_of(app).proposals


def get_sleep_schedule(app: Flask | None = None) -> SleepSchedule:
    """Consolidation ("sleep"): when it is due, and "consolidate now"."""
    return services_of(app).sleep


def get_history_learning(app: Flask | None = None) -> HistoryLearning:
    """Learning from an imported history: estimate, start, progress, cancel."""
    return services_of(app).learning


def get_access_gate(app: Flask | None = None) -> AccessGate:
    """Checks the access token and the sign-in cookie."""
    return services_of(app).access_gate


def get_failure_limiter(app: Flask | None = None) -> FailureLimiter:
    """Counts failed sign-ins per client address."""
    return services_of(app).access_limiter
