"""The composition root: every service of one app, built by a pure function, then started.

`build_services(config)` only constructs objects, in dependency order: it starts no thread and
touches nothing on disk or on the network (`Database`, `ProcessOwner` and `SessionLeases` open
their files when started; the one side effect is telling the log filter which configured values
are secrets, so whatever a built service logs is masked). `start(services)` does the start-up
work: the data directory, the database's migrations, seeding, the recoveries of a previous run,
and last the worker thread (in a chat worker whose jobs run in the memory process,
`MEMORY_PROCESS`: only its look at what that process finished). `start_memory(services)` is the
memory process's start (`src/memory_process.py`). `stop(services)` ends what either began.
`create_app` does build then start (`provider.init_services`); a test may build without
starting and nothing runs.
See docs/development.md#composition-root-build-then-start.
"""
import atexit
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from .api_request import PROVIDERS, ApiClient, EndpointChecks
from .cortex import CortexService
from .cortex.ownership import ProcessOwner
from .cortex.personas_lookup import persona_exists
from .cortex.review import ProposalService
from .cortex.service import DEFAULT_BUDGET
from .cortex.sleep import SleepSchedule
from .cortex.trigger import CortexTrigger
from .cortex.update import CortexUpdateService
from .cortex.worker import LEASE_SECONDS, POLL_SECONDS, CortexWorker
from .doorbell import Doorbell
from .logsafe import register_secret
from .models.settings import MemoryRunSettings
from .portability.backup_service import BackupService
from .portability.chat_import import ChatImportService
from .portability.service import CardService
from .process_bells import ProcessBells
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
from .services.generations import GenerationHub
from .services.history_learning import HistoryLearning
from .services.memory_settings import MemorySettings
from .services.persona_cleanup import PersonaCleanup
from .services.persona_service import PersonaService
from .services.poll_loop import PollLoop
from .services.prompt_inspector import PromptInspector
from .services.secrets import SecretStore
from .services.session_leases import SessionLeases
from .services.session_service import SessionService
from .services.settings_service import SettingsService
from .services.token_counter import BUDGET_SECONDS, TokenCounter
from .services.token_rules import checked_token
from .services.user_personas import UserPersonaService
from .services.world_books import WorldBookService
from .storage import Database, settings_store, user_personas
from .storage.generations import ConfigCache

log = logging.getLogger(__name__)
Config = Mapping[str, Any]
NEWS_SECONDS = 10.0  # a chat worker's look at finished jobs and titles without a ring
TITLE_REST_SECONDS = 60.0  # a title runner's look without a ring (the doorbell wakes it)
TITLE_RUNNERS = 2


@dataclass(frozen=True, slots=True)
class Services:
    """One app's services, each built once; routes reach them through `provider.get_*`."""

    data_dir: str
    run_worker: bool  # CORTEX_WORKER: `start` runs the worker thread
    memory_process: bool  # MEMORY_PROCESS: jobs and titles run in the memory process
    db: Database
    cortex: CortexService
    persona_cleanup: PersonaCleanup
    secrets: SecretStore
    access_gate: AccessGate
    access_limiter: FailureLimiter
    key_checks: EndpointChecks
    settings: SettingsService
    memory_settings: MemorySettings
    api_client: ApiClient
    connection_tester: ConnectionTester
    personas: PersonaService
    cards: CardService
    chat_import: ChatImportService
    world_books: WorldBookService
    user_personas: UserPersonaService
    backup: BackupService
    conversation_tools: ConversationTools
    job_owner: ProcessOwner
    proposals: ProposalService
    update: CortexUpdateService
    cortex_worker: CortexWorker
    cortex_trigger: CortexTrigger
    sleep: SleepSchedule
    learning: HistoryLearning
    sessions: SessionService
    session_leases: SessionLeases
    titles: TitleGenerator
    chat: ChatService
    prompt_inspector: PromptInspector
    news: PollLoop  # a chat worker's look at what the memory process finished
    news_bells: ProcessBells  # rung when a job or title finishes, heard by the chat workers
    title_runners: tuple[PollLoop, ...]  # the memory process's
    doorbell: Doorbell  # rung by chat workers when they queue, answered by the memory process


class _Memory(NamedTuple):
    """The cortex update machinery, built together (they share the job owner and settings)."""

    job_owner: ProcessOwner
    proposals: ProposalService
    update: CortexUpdateService
    cortex_worker: CortexWorker
    cortex_trigger: CortexTrigger
    sleep: SleepSchedule


def build_services(config: Config) -> Services:
    """Every service for `config`, in dependency order; nothing starts (see the module doc).
    Raises WeakToken for an access token not worth the name, before anything is built."""
    token = _access_token(config)
    data_dir = str(config["DATA_DIR"])
    db = Database(os.path.join(data_dir, "app.db"))
    cortex = _cortex(config, db)
    secrets = SecretStore(data_dir)
    key_checks = EndpointChecks(float(config["ANTHROPIC_TIMEOUT"]), config["MODEL"],
                                config.get("ANTHROPIC_BASE_URL"))
    settings = _settings_service(config, db, secrets, key_checks)
    api_client = _api_client(config, settings)
    cleanup = PersonaCleanup(db, cortex, data_dir)
    bells = ProcessBells(os.path.join(data_dir, "locks"), "replies")
    news_bells = ProcessBells(os.path.join(data_dir, "locks"), "news")
    personas = PersonaService(db, cortex, cleanup, ring=bells.ring)
    memory_process = bool(config.get("MEMORY_PROCESS"))
    doorbell = Doorbell(os.path.join(data_dir, "locks", "memory.bell"))
    ring = doorbell.ring if memory_process else None
    memory = _memory(config, db, cortex, api_client, settings.cache, ring, news_bells.ring)
    sessions = SessionService(db, retracted=memory.cortex_trigger.notice_retractions,
                              ring=bells.ring)
    leases = SessionLeases(data_dir)
    titles = TitleGenerator(db, api_client, sessions, settings, memory.job_owner,
                            inline=not memory_process, ring=ring, told=news_bells.ring)
    chat = ChatService(db, api_client, cortex, settings, leases, titles=titles,
                       trigger=memory.cortex_trigger.check_and_trigger,
                       retracted=memory.cortex_trigger.notice_retractions,
                       status=memory.cortex_trigger.status,
                       hub=GenerationHub(db, float(config["REPLY_CHECKPOINT_SECONDS"]), bells))
    return Services(
        data_dir=data_dir,
        run_worker=bool(config.get("CORTEX_WORKER")),
        memory_process=memory_process,
        db=db,
        cortex=cortex,
        persona_cleanup=cleanup,
        secrets=secrets,
        access_gate=AccessGate(token),
        access_limiter=_failure_limiter(config, db),
        key_checks=key_checks,
        settings=settings,
        memory_settings=MemorySettings(db),
        api_client=api_client,
        connection_tester=ConnectionTester(settings, api_client),
        personas=personas,
        cards=CardService(db, cortex, personas),
        chat_import=ChatImportService(db, personas),
        world_books=WorldBookService(db, personas),
        user_personas=UserPersonaService(db),
        backup=BackupService(data_dir, db, cortex),
        conversation_tools=ConversationTools(db),
        job_owner=memory.job_owner,
        proposals=memory.proposals,
        update=memory.update,
        cortex_worker=memory.cortex_worker,
        cortex_trigger=memory.cortex_trigger,
        sleep=memory.sleep,
        learning=HistoryLearning(db, cortex, memory.update, memory.cortex_worker,
                                 memory.cortex_trigger, settings),
        sessions=sessions,
        session_leases=leases,
        titles=titles,
        chat=chat,
        prompt_inspector=PromptInspector(
            db, sessions, api_client,
            TokenCounter(db, api_client,
                         float(config.get("COUNT_BUDGET_SECONDS", BUDGET_SECONDS)))),
        news=PollLoop(partial(_announce, memory.cortex_worker, titles),
                      float(config.get("NEWS_SECONDS", NEWS_SECONDS)), "news"),
        news_bells=news_bells,
        title_runners=tuple(PollLoop(titles.run_next, TITLE_REST_SECONDS, f"titles-{n}")
                            for n in range(TITLE_RUNNERS)),
        doorbell=doorbell,
    )


def start(services: Services) -> None:
    """The start-up work, in order: the owner-only data directory and the migrated database;
    the default persona's files; the deletions, key bindings, jobs and replies a previous run
    left unfinished; the default persona; last the worker thread (if `run_worker`)."""
    _owner_only_dir(services.data_dir)
    services.db.open()
    services.cortex.ensure_cortex_files("default")
    services.persona_cleanup.recover()
    services.settings.bind_stored_keys()
    services.personas.ensure_default(services.settings.values().language)
    services.session_leases.open()
    services.job_owner.open()
    services.job_owner.sweep()
    services.cortex_worker.recover_interrupted()
    settled = services.chat.recover_orphans()
    if settled:
        log.warning("Marked %d reply(s) left streaming by a stopped process as incomplete",
                    settled)
    if services.memory_process:
        services.news_bells.listen(services.news.wake)
        services.news.start()
    elif services.run_worker:
        _start_worker(services)


def start_memory(services: Services) -> None:
    """The memory process's start-up (`src/memory_process.py`): the migrated database, the job owner,
    the recoveries of jobs and titles whose owner died, the doorbell the chat workers ring when
    they queue (answered from now on; what they queued before is found by the first passes),
    then the cortex worker (with the idle, retraction and sleep scans, resting between them
    unless rung) and the title runners. No seeding, no replies: the chat workers do those."""
    _owner_only_dir(services.data_dir)
    services.db.open()
    services.job_owner.open()
    services.job_owner.sweep()
    services.cortex_worker.recover_interrupted()
    services.titles.recover()
    services.doorbell.listen(partial(_answer_bell, services))
    _start_worker(services, rest=POLL_SECONDS)
    for runner in services.title_runners:
        runner.start()


def _start_worker(services: Services, **rest: float) -> None:
    services.cortex_worker.start(tick=partial(_after_each_pass, services.cortex_trigger,
                                              services.sleep, services.titles), **rest)
    atexit.register(services.cortex_worker.stop)


def _answer_bell(services: Services) -> None:
    """A chat worker queued a cortex job or a title: the memory process looks now."""
    services.cortex_worker.nudge()
    for runner in services.title_runners:
        runner.wake()


def stop(services: Services) -> None:
    """Stops the replies, the worker and the loops, then closes the API client's connections,
    the lock files and the database's idle connections (tests, clean exits; a built app never
    started stops as well)."""
    services.chat.close()
    services.doorbell.close()
    services.news_bells.close()
    services.news.stop()
    for runner in services.title_runners:
        runner.stop()
    services.cortex_worker.stop()
    atexit.unregister(services.cortex_worker.stop)  # a stopped app is not kept for the exit
    services.titles.close()  # its requests in flight end before the client closes
    services.api_client.close()
    services.session_leases.close()
    services.job_owner.close()
    services.db.close()


def _after_each_pass(trigger: CortexTrigger, sleep: SleepSchedule,
                     titles: TitleGenerator) -> None:
    """What the worker does every POLL_SECONDS: the idle, retraction and sleep scans, and the
    title requests whose owner died."""
    trigger.scan_idle()
    trigger.scan_retractions()
    sleep.scan()
    titles.recover()


def _announce(worker: CortexWorker, titles: TitleGenerator) -> bool:
    """A chat worker's look at the cortex jobs and titles another process finished, for its
    sockets: when the finishing process rings the news bells (`process_bells.py`), else every
    NEWS_SECONDS; never "busy"."""
    worker.announce_foreign()
    titles.announce_finished()
    return False


def _access_token(config: Config) -> str | None:
    """The access token, checked before anything else (token_rules.py; DESIGN §9)."""
    register_secret(config.get("ACCESS_TOKEN"))
    token = checked_token(config.get("ACCESS_TOKEN"))
    register_secret(token)
    return token


def _owner_only_dir(path: str) -> None:
    """The data directory holds memories and keys: only its owner may list or enter it."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o700)


def _failure_limiter(config: Config, db: Database) -> FailureLimiter:
    """Failed sign-ins, per address and across all addresses and worker processes (DESIGN §9)."""
    return FailureLimiter(
        db, int(config.get("ACCESS_FAILURE_LIMIT", FAILURE_LIMIT)),
        float(config.get("ACCESS_FAILURE_WINDOW", FAILURE_WINDOW)),
        int(config.get("ACCESS_FAILURE_GLOBAL_LIMIT", GLOBAL_FAILURE_LIMIT)))


def _settings_service(config: Config, db: Database, secrets: SecretStore,
                      key_checks: EndpointChecks) -> SettingsService:
    """The model default and the environment's keys come from config; the rest from SQLite. A
    new key is checked by `key_checks`, not by the app's ApiClient (which reads its connection
    from this service, so it is built after it)."""
    provider = config.get("PROVIDER") or "anthropic"
    if provider not in PROVIDERS:
        raise ValueError(f"PERSONA_PROVIDER must be one of {', '.join(PROVIDERS)}")
    return SettingsService(db, secrets, key_checks, default_model=config["MODEL"],
                           env_api_key=config.get("ANTHROPIC_API_KEY"), provider=provider,
                           env_keys={"openai_compatible": config.get("OPENAI_API_KEY") or None},
                           env_base_urls={"anthropic": config.get("ANTHROPIC_BASE_URL") or None,
                                          "openai_compatible": config.get("OPENAI_BASE_URL")
                                          or None})


def _api_client(config: Config, settings: SettingsService) -> ApiClient:
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
        connection_source=settings.connection,
    )


def _cortex(config: Config, db: Database) -> CortexService:
    """Templates follow the "app" settings (language, user name); every operation re-checks
    that the persona still exists (deletion is final)."""
    return CortexService(str(config["DATA_DIR"]), db,
                         settings=lambda: settings_store.memory_run_settings(db.conn()),
                         budget=int(config.get("CORTEX_BUDGET", DEFAULT_BUDGET)),
                         exists=lambda persona_id: persona_exists(db.conn(), persona_id))


def _memory(config: Config, db: Database, cortex: CortexService, api_client: ApiClient,
            cache: ConfigCache, ring: Callable[[], None] | None,
            told: Callable[[], None]) -> _Memory:
    """Update service, worker, trigger and sleep schedule. The worker owns the jobs it claims
    through this app's `ProcessOwner` (a lock file held while the process lives, from `start`)
    and renews their lease (`CORTEX_JOB_LEASE` seconds); in a chat worker of a memory process
    it rings that process's doorbell (`ring`) for each job it queues, and whichever process
    finishes jobs rings the chat workers' news bells (`told`)."""

    def app_settings() -> MemoryRunSettings:
        """`user_name` read from the default user persona (as SettingsService.values() does),
        so memory runs name the person as the chat does."""
        conn = db.conn()
        default = user_personas.get_default(conn)
        return settings_store.memory_run_settings(conn, default.name if default else None)

    owner = ProcessOwner(str(config["DATA_DIR"]))
    proposals = ProposalService(cortex, db)
    update = CortexUpdateService(api_client, cortex, db, app_settings,
                                 default_model=config["MODEL"], proposals=proposals)
    worker = CortexWorker(db, update, owner,
                          lease_seconds=float(config.get("CORTEX_JOB_LEASE", LEASE_SECONDS)),
                          ring=ring, told=told)
    # The trigger reads the cortex settings and the context limit (one field checked, no user
    # persona) after every chat turn as the turn's prompt kept them (`cache`, the settings
    # service's), checked against the change counter its one statement reads.
    trigger = CortexTrigger(db, worker, cache=cache)
    return _Memory(owner, proposals, update, worker, trigger,
                   SleepSchedule(db, worker, cortex.budget))
