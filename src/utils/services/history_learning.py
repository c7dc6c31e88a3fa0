"""HistoryLearning: "learn from this history" for an imported conversation (issue 24).

The routes' one entry point: it checks the session (it must exist and be imported), estimates
(windows, tokens, cost) before anything runs, queues the learn job (a cortex job with reason
`learn`, run by the cortex worker through `cortex/learn_run.py`), reports its progress and
cancels it. One learn run per persona at a time; a second request while one is queued or
running is a conflict rather than a second run over the same history.
"""
import json

from ..api_request.anthropic import tool_params
from ..api_request.openai import system_text
from ..cortex import CortexService, learn_runs
from ..cortex.settings import load_cortex_settings
from ..cortex.trigger import CortexTrigger
from ..cortex.update import MAX_TOKENS, CortexUpdateService
from ..cortex.worker import CortexWorker
from ..models.cortex import CortexFile
from ..models.learn import MAX_WINDOW, MIN_WINDOW, StoredLearnRun
from ..models.sessions import SessionRow
from ..storage import Database
from ..storage.personas import get_persona
from ..storage.sessions import get_session_row
from . import learn_cost
from .errors import ServiceError, invalid, not_found
from .settings_service import SettingsService

_MESSAGE_OVERHEAD = 10  # tokens of "[2024-06-06 15:14] Name: " and the blank line after it
# What a learn run's view shows of its row and of its job.
_FROM_RUN = {"job_id", "session_id", "persona_id", "windows", "windows_done", "messages",
             "window_messages", "cancel_requested"}
_FROM_JOB = {"status", "error", "error_message", "proposal_id", "summary", "usage",
             "created_at", "started_at", "finished_at"}


class HistoryLearning:
    """Estimate, start, progress and cancel of learn runs over imported sessions."""

    def __init__(self, db: Database, cortex: CortexService, update: CortexUpdateService,
                 worker: CortexWorker, trigger: CortexTrigger, settings: SettingsService):
        self._db, self._cortex, self._update, self._worker = db, cortex, update, worker
        self._trigger, self._settings = trigger, settings

    def status(self, session_id: str) -> dict:
        """`{session_id, persona_id, run}`: the session's newest learn run (or null)."""
        session = self._imported(session_id)
        run = learn_runs.latest_run(self._db.conn(), session_id)
        return {"session_id": session_id, "persona_id": session.persona_id,
                "run": run_view(run) if run else None}

    def estimate(self, session_id: str, window_messages: int | None = None) -> dict:
        """What learning from the session would take: windows, tokens and cost."""
        session = self._imported(session_id)
        size = self._window_size(window_messages)
        windows = self._update.learning.windows(session_id, size)
        persona = get_persona(self._db.conn(), session.persona_id)
        fixed = self._fixed_tokens(session.persona_id)
        own = [learn_cost.tokens_of_bytes(w["bytes"]) + _MESSAGE_OVERHEAD * w["count"]
               for w in windows]
        provider = self._settings.values().provider
        result = learn_cost.estimate(own, fixed, provider, self._update.model_for(persona),
                                     MAX_TOKENS)
        return {"session_id": session_id, "persona_id": session.persona_id,
                "window_messages": size, "messages": sum(w["count"] for w in windows), **result}

    def start(self, session_id: str, window_messages: int | None = None) -> dict:
        """Queues the learn run; the run's view (status `queued`)."""
        session = self._imported(session_id)
        size = self._window_size(window_messages)
        conn = self._db.conn()
        if not load_cortex_settings(conn).enabled:
            raise ServiceError(409, "cortex_disabled",
                               "The cortex is disabled: enable it in the settings first.")
        windows = self._update.learning.windows(session_id, size)
        if not windows:
            raise ServiceError(409, "nothing_to_learn",
                               "This conversation has no imported messages on its active branch.")
        run = learn_runs.create_run(conn, session.persona_id, session_id, size,
                                    (windows[0]["first"], windows[-1]["last"]), len(windows),
                                    sum(w["count"] for w in windows))
        if run is None:
            raise ServiceError(409, "learn_in_progress",
                               "This persona is already learning from a history; wait for it "
                               "to finish or cancel it.")
        self._worker.wake()
        return run_view(run)

    def cancel(self, session_id: str) -> dict:
        """Cancels the session's queued or running learn run; nothing it read is applied."""
        self._imported(session_id)
        conn = self._db.conn()
        run = learn_runs.latest_run(conn, session_id)
        if run is None or learn_runs.request_cancel(conn, run.job_id) == "finished":
            raise ServiceError(409, "learn_not_running",
                               "No learning from this conversation is queued or running.")
        return run_view(learn_runs.get_run(conn, run.job_id) or run)

    def _imported(self, session_id: str) -> SessionRow:
        """The session, which must be imported (its row alone: counting a 50,000-message
        branch on every progress poll would hold the event loop)."""
        session = get_session_row(self._db.conn(), session_id)
        if session is None:
            raise not_found("session", session_id)
        if not session.imported:
            raise ServiceError(409, "not_imported",
                               "Only an imported conversation can be learned from this way; "
                               "the memory learns from your own chats by itself.")
        return session

    def _window_size(self, value: object) -> int:
        if value is None:
            return min(MAX_WINDOW, max(MIN_WINDOW, self._trigger.threshold()[1]))
        if isinstance(value, bool) or not isinstance(value, int) \
                or not MIN_WINDOW <= value <= MAX_WINDOW:
            raise invalid("window_messages", f"must be an integer from {MIN_WINDOW} to "
                                             f"{MAX_WINDOW}")
        return value

    def _fixed_tokens(self, persona_id: str) -> int:
        """Tokens of one update request without its conversation (prompt, files, tools)."""
        files: dict[str, CortexFile] = {f.filename: f for f in
                                        self._cortex.read_all_info(persona_id)}
        config = self._update.request_for(persona_id, files, [])
        tools = tool_params(config.tools or [])
        text = system_text(config.system_prompt) + json.dumps(config.messages) + json.dumps(tools)
        return learn_cost.estimate_tokens(text)


def run_view(run: StoredLearnRun) -> dict:
    """A learn run as the API shows it (its job's fields null when the job row is gone)."""
    job = run.job
    shown = job.model_dump(include=_FROM_JOB) if job is not None else dict.fromkeys(_FROM_JOB)
    return {**run.model_dump(include=_FROM_RUN), "cancelled": shown["error"] == "cancelled",
            **shown, "files": job.files if job is not None else []}
