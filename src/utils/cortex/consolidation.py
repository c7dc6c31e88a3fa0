"""ConsolidationService: "sleep", a tool_use run that rewrites the cortex files concisely.

It runs as a job of reason `consolidate` through the same worker, edits a staged copy with the
same tools (pinned blocks survive byte for byte), and is applied all-or-nothing: one revision per
file summarised "consolidated: 11,900 → 6,200 characters", with the lines each file lost kept in
the archive (storage/cortex_archive.py) in the same transaction. In review mode it becomes (part of) the
pending proposal instead, and the archive is written when that is accepted.
"""
import logging
from typing import Any

from .. import prompts
from ..api_request import ApiResponse, RequestConfig
from ..models.cortex import CortexFile
from ..models.personas import stand_in
from ..storage.personas import get_persona
from .paths import CORTEX_FILES
from .run_context import RunContext
from .run_outcome import consolidated_summary, job_guard, run_failure, run_result
from .run_request import edit_run_request, format_day, render_file
from .staged_apply import NotApplied
from .staging import StagingConflict
from .tools import CortexToolbox

log = logging.getLogger(__name__)
MAX_TOKENS = 16_000
TARGET_SHARE = "60 %"


class ConsolidationService:
    """Runs one consolidation of a persona's cortex (used by CortexUpdateService)."""

    def __init__(self, context: RunContext) -> None:
        self._context = context

    def run(self, persona_id: str, job_id: str) -> dict[str, Any]:
        """Consolidates the persona's files; returns the same result shape as an update."""
        ctx = self._context
        if not getattr(ctx.api, "is_ready", False):
            return run_failure("not_configured",
                               "No API key configured: add one in Settings.")
        staged, shown, review = ctx.staged_run(persona_id)
        toolbox = CortexToolbox(ctx.cortex, staged, follow_files=not review)
        response = ctx.api.tool_request(self._config(persona_id, shown), toolbox)
        if not response.success:
            code = response.error or "api_error"
            return ctx.failed(persona_id, job_id, toolbox, code, response.error_message,
                              bool(response.retryable), response.usage)
        summary = _summary(toolbox, response)
        guard = job_guard(persona_id, job_id)
        try:
            if review:
                proposal_id = ctx.proposals.propose(
                    toolbox.staged, job_id=job_id, kind="consolidate", summary=summary,
                    usage=response.usage, guard=guard)
                return {**run_result(True), "summary": summary, "usage": response.usage,
                        "proposal_id": proposal_id}
            revisions = ctx.cortex.apply_staged(
                toolbox.staged, job_id=job_id, summary=summary, archive=True,
                summary_for=consolidated_summary, guard=guard,
                outcome={"summary": summary, "usage": response.usage})
        except (StagingConflict, NotApplied) as err:
            code = "edit_conflict" if isinstance(err, StagingConflict) else "interrupted"
            return ctx.failed(persona_id, job_id, toolbox, code,
                              "The consolidation could not be applied; nothing changed.",
                              True, response.usage)
        log.info("Consolidation %s for %s done: %s", job_id, persona_id, summary)
        return {**run_result(True, toolbox, revisions), "summary": summary,
                "usage": response.usage}

    def _config(self, persona_id: str, shown: list[CortexFile]) -> RequestConfig:
        ctx = self._context
        app = ctx.app_settings()
        persona = get_persona(ctx.db.conn(), persona_id) or stand_in(persona_id, app.language)
        language = prompts.language_of(persona.language, app.language)
        now = ctx.now()
        files = {f.filename: f for f in shown}
        values = {"char_name": persona.name or persona_id,
                  "user_name": prompts.user_name_for(persona, app.user_name, language),
                  "today": format_day(now, language), "target_share": TARGET_SHARE,
                  "files": "\n\n".join(render_file(files[name]) for name in CORTEX_FILES
                                       if name in files)}
        return edit_run_request("cortex_consolidate", language, values,
                                model=ctx.model_for(persona), max_tokens=MAX_TOKENS)


def _summary(toolbox: CortexToolbox, response: ApiResponse) -> str:
    parts = [consolidated_summary(f) for f in toolbox.staged.changed_files()]
    names = [f.filename for f in toolbox.staged.changed_files()]
    text = "; ".join(f"{name} {part}" for name, part in zip(names, parts, strict=True))
    return text or (response.content or "").strip() or "Nothing needed consolidating."
