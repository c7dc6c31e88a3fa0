"""RunContext: what every cortex run (update, reconciliation, consolidation) works with.

CortexUpdateService builds it once and hands it to the reconciliation and the consolidation,
so each run depends on this context instead of on the service that started it.
"""
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..api_request import ApiClient
from ..models.cortex import CortexFile
from ..models.personas import Persona
from ..models.settings import MemoryRunSettings
from ..storage.db import Database
from .persona_settings import review_mode
from .review import ProposalService
from .run_outcome import run_result
from .service import CortexService
from .staging import StagedEdits
from .tools import CortexToolbox

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunContext:
    """The API client, the cortex, the database, the proposals, the "app" settings (model,
    language, user name), the clock runs are dated with, and the default model."""

    api: ApiClient
    cortex: CortexService
    db: Database
    proposals: ProposalService
    settings: Callable[[], MemoryRunSettings]
    clock: Callable[[], datetime]
    default_model: str

    def app_settings(self) -> MemoryRunSettings:
        """The "app" settings (model, language, user name)."""
        return self.settings()

    def model_for(self, persona: Persona | None) -> str:
        """The model every cortex run of `persona` uses (update, reconciliation,
        consolidation): the cortex model setting, else the persona's own model, else the chat
        model, else the configured default."""
        app = self.settings()
        return (app.cortex_model or (persona.model if persona else None) or app.model
                or self.default_model)

    def now(self) -> datetime:
        """The local time runs are dated with."""
        return self.clock()

    def staged_run(self, persona_id: str) -> tuple[StagedEdits, list[CortexFile], bool]:
        """(staged copy, files as the model sees them, review mode) for a run starting now: in
        review mode the run builds on the pending proposal and a person's edit meanwhile is
        left to the review (the proposal turns stale), instead of being rebased on."""
        infos = self.cortex.read_all_info(persona_id)
        if review_mode(self.db.conn(), persona_id):
            return (*self.proposals.stage_for_run(persona_id, infos), True)
        return self.cortex.stage(persona_id, infos), infos, False

    @staticmethod
    def failed(persona_id: str, job_id: str, toolbox: CortexToolbox, code: str,
               message: str | None, retryable: bool,
               usage: dict[str, int] | None) -> dict[str, Any]:
        """A run that applies nothing; what it staged is kept on the job for inspection."""
        log.warning("Cortex update %s for %s failed: %s", job_id, persona_id, code)
        return {**run_result(False), "error": code, "usage": usage,
                "error_message": message or f"The update failed ({code}).",
                "retryable": retryable, "attempted": toolbox.staged.attempted()}
