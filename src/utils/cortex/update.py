"""CortexUpdateService: one tool_use run that lets a persona edit its own cortex files.

The prompt preloads the three files with their meters and holds only the conversation since the
last processed message, fenced as data. The model's edits are staged (see staging.py) and, only
when the run succeeds, applied as one group of `ai` revisions carrying the job id, the message
range and the summary, in the transaction that marks the range processed (staged_apply.py). A
failed or interrupted run changes no file; its staged edits stay on the job for inspection and
its messages are picked up again, so a fact is never written twice. The prompt is marked for
prompt caching, so the rounds after the first read it from the cache.
"""
import logging
import sqlite3
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .. import prompts
from ..api_request import ApiClient, ApiResponse, RequestConfig
from ..models.cortex import CortexFile
from ..models.personas import Persona, stand_in
from ..models.settings import MemoryRunSettings
from ..storage import cortex_input, cortex_jobs as jobs, provenance, settings_store, user_personas
from ..storage.db import Database
from ..storage.personas import get_persona
from .consolidation import ConsolidationService
from .errors import PersonaNotFound
from .learn_run import LearnRunner
from .paths import CORTEX_FILES, validate_persona_id
from .reconcile import ReconcileService
from .review import ProposalService
from .run_context import RunContext
from .run_outcome import RETRYABLE, job_guard, run_failure, run_result
from .run_request import USER_MARKER, format_day, render_file
from .service import CortexService
from .settings import load_cortex_settings
from .staged_apply import Guard, NotApplied
from .staging import StagingConflict
from .tools import CortexToolbox, tool_definitions

log = logging.getLogger(__name__)
MAX_TOKENS = 4096
MAX_MESSAGES = 200
MAX_CONVERSATION_CHARS = 120_000


class CortexUpdateService:
    """Runs cortex updates through `ApiClient.tool_request` and records what they processed."""

    def __init__(self, api_client: ApiClient, cortex_service: CortexService, db: Database,
                 settings_fn: Callable[[], MemoryRunSettings] | None, default_model: str, *,
                 clock: Callable[[], datetime] | None = None,
                 proposals: ProposalService | None = None) -> None:
        self._api = api_client
        self._cortex = cortex_service
        self._db = db
        self.proposals = proposals or ProposalService(cortex_service, db)
        self._settings = settings_fn or (lambda: settings_store.memory_run_settings(db.conn()))
        self._default_model = default_model
        self._clock = clock or (lambda: datetime.now().astimezone())
        self._run = RunContext(api_client, cortex_service, db, self.proposals, self._settings,
                               self._clock, default_model)
        self.consolidation = ConsolidationService(self._run)
        self.reconciliation = ReconcileService(self._run)
        self.learning = LearnRunner(self._run, self.request_for, MAX_CONVERSATION_CHARS)

    def consolidate(self, persona_id: str, job_id: str) -> dict[str, Any]:
        """Runs a consolidation ("sleep") of the persona's cortex as job `job_id`."""
        validate_persona_id(persona_id)
        if not load_cortex_settings(self._db.conn()).enabled:
            return run_failure("cortex_disabled", "The cortex is disabled in the settings.")
        return self.consolidation.run(persona_id, job_id)

    def reconcile(self, persona_id: str, job_id: str, *,
                  job_continues: bool = False) -> dict[str, Any]:
        """Reconciles the persona's memory with retracted messages as (part of) job `job_id`."""
        validate_persona_id(persona_id)
        if not load_cortex_settings(self._db.conn()).enabled:
            return run_failure("cortex_disabled", "The cortex is disabled in the settings.")
        return self.reconciliation.run(persona_id, job_id, job_continues=job_continues)

    def plan_range(self, persona_id: str) -> tuple[int, int] | None:
        """The ids (first, last) of the persona's unprocessed messages the next run will take."""
        conn = self._db.conn()
        after = jobs.last_processed_id(conn, persona_id)
        rows = cortex_input.unprocessed_sizes(conn, persona_id, after, MAX_MESSAGES)
        if not rows:
            return None
        total, last = 0, rows[0]["id"]
        for row in rows:
            total += row["chars"]
            if total > MAX_CONVERSATION_CHARS and row["id"] != rows[0]["id"]:
                break
            last = row["id"]
        return rows[0]["id"], last

    def run(self, persona_id: str, job_id: str | None = None,
            message_range: tuple[int, int] | None = None) -> dict[str, Any]:
        """Updates the persona's cortex from its unprocessed messages.

        Returns `{success, updates, summary, error, ...}`; `error` is a §4 code (or one of the
        client's `truncated_tool_call`, `tool_execution_failed`), or `cortex_disabled`.
        """
        validate_persona_id(persona_id)
        job_id = job_id or uuid.uuid4().hex
        if not load_cortex_settings(self._db.conn()).enabled:
            return run_failure("cortex_disabled", "The cortex is disabled in the settings.")
        if not getattr(self._api, "is_ready", False):
            return run_failure("not_configured", "No API key configured: add one in Settings.")
        message_range = message_range or self.plan_range(persona_id)
        if message_range is None:
            return {**run_result(True), "summary": "Nothing new to remember."}
        toolbox, response, sources = self._call_model(persona_id, job_id, message_range)
        return self._finish(persona_id, job_id, message_range, toolbox, response, sources)

    def _call_model(self, persona_id: str, job_id: str, message_range: tuple[int, int]
                    ) -> tuple[CortexToolbox, ApiResponse, list[dict[str, Any]]]:
        staged, shown, review = self._run.staged_run(persona_id)
        messages = _messages(self._db.conn(), persona_id, message_range)
        config = self.request_for(persona_id, {f.filename: f for f in shown}, messages)
        toolbox = CortexToolbox(self._cortex, staged, follow_files=not review)
        log.info("Cortex update %s for %s: messages %d..%d", job_id, persona_id, *message_range)
        return (toolbox, self._api.tool_request(config, toolbox),
                [provenance.source_of(m) for m in messages])

    def request_for(self, persona_id: str, files: dict[str, CortexFile],
                    messages: list[dict[str, Any]]) -> RequestConfig:
        """The update request showing `files` (as the model sees them) and the conversation
        `messages`; a learn run (learn_run.py) sends one per window of an imported history."""
        conn = self._db.conn()
        app = self._settings()
        persona = get_persona(conn, persona_id) or stand_in(persona_id, app.language)
        language = prompts.language_of(persona.language, app.language)
        people = _people(conn, persona, app, language, messages)
        system, user = build_prompt(persona, people, files, messages, language, self._clock())
        prompt = {"type": "text", "text": user, "cache_control": {"type": "ephemeral"}}
        return RequestConfig(system_prompt=system, messages=[{"role": "user", "content": [prompt]}],
                             model=self.model_for(persona), max_tokens=MAX_TOKENS,
                             tools=tool_definitions(), request_type="cortex_update")

    def model_for(self, persona: Persona | None) -> str:
        """The model a cortex run of `persona` uses: the cortex model setting, else the
        persona's own model, else the chat model."""
        return self._run.model_for(persona)

    def recover_staged(self) -> int:
        """Completes groups of edits a crash interrupted (before jobs are failed as orphans)."""
        return self._cortex.recover_staged()

    def _finish(self, persona_id: str, job_id: str, message_range: tuple[int, int],
                toolbox: CortexToolbox, response: ApiResponse,
                sources: list[dict[str, Any]]) -> dict[str, Any]:
        if not response.success:
            code = response.error or "api_error"
            return self._run.failed(persona_id, job_id, toolbox, code, response.error_message,
                                bool(response.retryable) or code in RETRYABLE, response.usage)
        summary = (response.content or "").strip()
        guard = job_guard(persona_id, job_id)
        if toolbox.review:
            return self._propose(persona_id, job_id, message_range, toolbox, response, guard,
                                 sources)
        try:
            revisions = self._cortex.apply_staged(
                toolbox.staged, job_id=job_id, message_range=message_range,
                summary=summary or "Cortex update", outcome={"summary": summary,
                                                             "usage": response.usage},
                guard=guard, sources=sources)
        except StagingConflict as err:
            log.info("Cortex update %s for %s conflicts with an edit: %s", job_id, persona_id, err)
            return self._run.failed(persona_id, job_id, toolbox, "edit_conflict",
                                f"{err.filename} was edited while the update ran and its edits "
                                "no longer fit; the update runs again later.", True,
                                response.usage)
        except (NotApplied, PersonaNotFound):
            return self._run.failed(persona_id, job_id, toolbox, "interrupted",
                                "The update lost its job (persona deleted or lease expired); "
                                "nothing was applied.", True, response.usage)
        log.info("Cortex update %s for %s done (%s): %s", job_id, persona_id,
                 response.stop_reason, ", ".join(revisions) or "no changes")
        return {**run_result(True, toolbox, revisions), "summary": summary, "usage": response.usage,
                "message_range": list(message_range)}

    def _propose(self, persona_id: str, job_id: str, message_range: tuple[int, int],
                 toolbox: CortexToolbox, response: ApiResponse, guard: Guard,
                 sources: list[dict[str, Any]]) -> dict[str, Any]:
        """Review mode: the staged edits become (part of) the pending proposal."""
        summary = (response.content or "").strip()
        try:
            proposal_id = self.proposals.propose(
                toolbox.staged, job_id=job_id, kind="update", summary=summary or "Cortex update",
                message_range=message_range, usage=response.usage, guard=guard, sources=sources)
        except NotApplied:
            return self._run.failed(persona_id, job_id, toolbox, "interrupted",
                                "The update lost its job (persona deleted or lease expired); "
                                "nothing was proposed.", True, response.usage)
        return {**run_result(True), "summary": summary, "usage": response.usage,
                "message_range": list(message_range), "proposal_id": proposal_id}



def _people(conn: sqlite3.Connection, persona: Persona, app: MemoryRunSettings, language: str,
            messages: list[dict[str, Any]]) -> dict[str | None, tuple[str, str]]:
    """`(name, description)` of the person in each session of the range (its user persona,
    docs/about-you.md); key None is the one the prompt speaks of: the person of the newest
    message (the conversation just had), else the default."""
    named = app.user_name
    people = {sid: prompts.user_for(persona, named, language, user_personas.of_session(conn, sid))
              for sid in {m["session_id"] for m in messages}}
    newest = max(messages, key=lambda m: m["id"])["session_id"] if messages else None
    people[None] = people[newest] if newest else prompts.user_for(
        persona, named, language, user_personas.get_default(conn))
    return people


def build_prompt(persona: Persona, people: str | dict[str | None, tuple[str, str]],
                 files: dict[str, CortexFile], messages: list[dict[str, Any]], language: str,
                 now: datetime) -> tuple[str, str]:
    """The system prompt (role and rules) and the user message (files and conversation);
    `people` is a plain user name or `_people`'s map of each session's person."""
    if isinstance(people, str):
        people = {None: (people, "")}
    system, user = prompts.load_prompt("cortex_update", language).split(USER_MARKER, 1)
    user_name, user_description = people[None]
    values = {
        "char_name": persona.name or persona.id,
        "char_description": persona.description.strip(),
        "user_name": user_name,
        "user_description": prompts.fence(user_description),
        "today": format_day(now, language),
        "today_date": f"{now:%Y-%m-%d}",
        "files": "\n\n".join(render_file(files[name])
                             for name in CORTEX_FILES if name in files),
        "conversation": render_conversation(messages, persona.name, user_name, now,
                                            {sid: pair[0] for sid, pair in people.items()}),
        "message_count": str(len(messages)),
    }
    flags = {"char_description": bool(values["char_description"]),
             "user_description": bool(user_description)}
    return (prompts.render(system, values, flags).strip(),
            prompts.render(user, values, flags).strip())


def render_conversation(messages: list[dict[str, Any]], char_name: str, user_name: str,
                        now: datetime, names: dict[str | None, str] | None = None) -> str:
    """The messages as `[date time] name: text` lines, one block per session; `names` gives a
    session's own user name (its user persona) where it differs from `user_name`."""
    blocks, session = [], None
    for message in messages:
        if message["session_id"] != session:
            session = message["session_id"]
            title = " ".join((message.get("title") or "").split())
            blocks.append(f'--- session "{prompts.fence(title)}" ---' if title else "--- session ---")
        person = (names or {}).get(message["session_id"]) or user_name
        name = person if message["role"] == "user" else char_name
        cut = " (reply interrupted)" if message.get("status") == "incomplete" else ""
        stamp = _local(message["created_at"], now)
        blocks.append(f"[{stamp}] {name}{cut}: {prompts.fence(message['content'])}")
    return "\n\n".join(blocks)


def _local(timestamp: str, now: datetime) -> str:
    try:
        moment = datetime.fromisoformat(timestamp)
    except (AttributeError, ValueError):
        return str(timestamp)[:16]
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return f"{moment.astimezone(now.tzinfo):%Y-%m-%d %H:%M}"


def _messages(conn: sqlite3.Connection, persona_id: str,
              message_range: tuple[int, int]) -> list[dict[str, Any]]:
    """The range's messages grouped by session (sessions in order of their first message)."""
    rows = cortex_input.range_messages(conn, persona_id, message_range)
    order: dict[str, int] = {}
    for row in rows:
        order.setdefault(row["session_id"], len(order))
    return sorted((dict(row) for row in rows), key=lambda m: (order[m["session_id"]], m["id"]))
