"""ReconcileService: memory follows the conversation when processed messages are taken back.

Runs inside a cortex job (reason `reconcile`, or any queued job it joined) through the same
single-flight worker, before the job's regular update. It reads every retraction no
reconciliation has handled (storage/retractions.py) and keeps those memory learned from:
1. direct path: when the `ai` revisions derived only from retracted messages are still the latest
   of their files (direct_revert.py), each file goes back to the revision before them, as a new
   `ai` revision "reverted: …" naming what it `reverts`; no model call;
2. model path: otherwise a tool_use run with the same edit tools sees the current files and the
   retracted messages (with what replaced them), fenced as data, and removes or corrects what
   came only from them; a person's edit stays (the prompt says so, the staging rebases on it).
Both are staged and applied all-or-nothing (or proposed, in review mode), anchored to the
retracted messages (`retracted` sources), and mark the retractions handled in the same
transaction. Retractions of messages memory never learned from are simply marked handled.
"""
import json
import logging
import sqlite3
from typing import Any, TypedDict

from .. import prompts
from ..api_request.types import RequestConfig
from ..models.cortex import CortexFile
from ..models.personas import stand_in
from ..storage import proposals, provenance, retractions
from ..storage.db import transaction
from ..storage.personas import get_persona
from . import direct_revert
from .errors import PersonaNotFound
from .paths import CORTEX_FILES
from .run_context import RunContext
from .run_outcome import job_guard, run_failure, run_result
from .run_request import edit_run_request, format_day, render_file
from .staged_apply import Guard, NotApplied
from .staging import EditError, StagedEdits, StagingConflict
from .tools import CortexToolbox

log = logging.getLogger(__name__)
MAX_TOKENS = 4096
CAUSES = {"delete": "message deleted", "edit": "message edited",
          "regenerate": "reply regenerated", "switch": "branch abandoned"}


class _Details(TypedDict):
    """What one reconciliation hands from its start to its apply (or proposal)."""

    job_id: str
    guard: Guard
    handles: list[int]
    job_continues: bool
    sources: list[dict[str, Any]]
    review: bool


class ReconcileService:
    """Reconciles one persona's memory with retracted messages (used by the cortex worker)."""

    def __init__(self, context: RunContext) -> None:
        self._context = context

    def pending(self, persona_id: str) -> bool:
        """True when a retraction waits for reconciliation."""
        return retractions.needs_reconciliation(self._context.db.conn(), persona_id)

    def run(self, persona_id: str, job_id: str, *,
            job_continues: bool = False) -> dict[str, Any]:
        """Reconciles now; returns the update result shape plus `path` ("direct" | "model" |
        "none")."""
        ctx = self._context
        conn = ctx.db.conn()
        rows = retractions.unhandled(conn, persona_id)
        handles = [row["id"] for row in rows]
        staged, shown, review = ctx.staged_run(persona_id)
        retracted = self._relevant(conn, persona_id, rows)
        details: _Details = {"job_id": job_id, "guard": job_guard(persona_id, job_id),
                               "handles": handles, "job_continues": job_continues,
                               "sources": [_anchor(row) for row in retracted.values()],
                               "review": review}
        if not retracted:
            with transaction(conn):
                retractions.mark_handled(conn, handles)
            return {**run_result(True), "summary": "Nothing to reconcile.", "path": "none"}
        summary = "reverted: " + ", ".join(sorted({CAUSES.get(r["cause"], "message retracted")
                                                    for r in retracted.values()}))
        reverts = None if review and staged.changed_files() else \
            direct_revert.plan(conn, persona_id, set(retracted))
        if reverts:
            try:
                for revert in reverts:
                    staged.write(revert.filename, revert.content)
                return self._commit(persona_id, staged, summary, None, details, "direct",
                                    {r.filename: min(r.undone) for r in reverts})
            except (EditError, StagingConflict) as err:
                log.info("Direct revert for %s not possible (%s); asking the model",
                         persona_id, err)
                staged, shown, review = ctx.staged_run(persona_id)
        return self._model(persona_id, staged, shown, retracted, details)

    def _model(self, persona_id: str, staged: StagedEdits, shown: list[CortexFile],
               retracted: dict[int, dict[str, Any]], details: _Details) -> dict[str, Any]:
        ctx = self._context
        if not getattr(ctx.api, "is_ready", False):
            return run_failure("not_configured", "No API key configured: add one in Settings.")
        toolbox = CortexToolbox(ctx.cortex, staged, follow_files=not details["review"])
        response = ctx.api.tool_request(self._config(persona_id, shown, retracted), toolbox)
        if not response.success:
            code = response.error or "api_error"
            return ctx.failed(persona_id, details["job_id"], toolbox, code,
                              response.error_message, True, response.usage)
        summary = (response.content or "").strip() or "Reconciled with retracted messages"
        result = self._commit(persona_id, toolbox.staged, summary, response.usage, details,
                              "model", None)
        if not result["success"]:
            result["attempted"] = toolbox.staged.attempted()
        return result

    def _commit(self, persona_id: str, staged: StagedEdits, summary: str,
                usage: dict[str, int] | None, details: _Details, path: str,
                reverts: dict[str, int] | None) -> dict[str, Any]:
        """Applies (or proposes) the staged result with the retractions it handles."""
        ctx = self._context
        try:
            if details["review"]:
                proposal_id = ctx.proposals.propose(
                    staged, job_id=details["job_id"], kind="reconcile", summary=summary,
                    usage=usage, guard=details["guard"], handles=details["handles"],
                    job_continues=details["job_continues"])
                return {**run_result(True), "summary": summary, "usage": usage, "path": path,
                        "proposal_id": proposal_id}
            revisions = ctx.cortex.apply_staged(
                staged, job_id=details["job_id"], summary=summary, guard=details["guard"],
                outcome={"summary": summary, "usage": usage}, sources=details["sources"],
                source_kind="retracted", reverts=reverts, handles=details["handles"],
                job_continues=details["job_continues"])
        except StagingConflict:
            return {**run_failure("edit_conflict", "A file was edited while memory was being "
                                  "reconciled; it runs again later."), "retryable": True,
                    "usage": usage}
        except (NotApplied, PersonaNotFound):
            return {**run_failure("interrupted", "The reconciliation lost its job; nothing "
                                  "was applied."), "retryable": True, "usage": usage}
        log.info("Reconciled %s (%s path): %s", persona_id, path, ", ".join(revisions) or
                 "no changes")
        return {**run_result(True), "files": list(revisions), "summary": summary,
                "usage": usage, "path": path}

    @staticmethod
    def _relevant(conn: sqlite3.Connection, persona_id: str,
                  rows: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """The retracted messages (latest row each) that are still off the branch and that
        memory learned from, or is learning from in a pending proposal (its range, or for a
        learn run's proposal, which has none, its anchors)."""
        latest = {row["message_id"]: row for row in rows if row["change"] == "retracted"}
        gone = retractions.off_branch(conn, latest)
        proposal = proposals.pending_range(conn, persona_id)
        anchored = {a["message_id"] for a in json.loads(proposal["sources"] or "[]")} \
            if proposal is not None and proposal["message_from"] is None else set()

        def learned(message_id: int) -> bool:
            in_proposal = message_id in anchored or (
                proposal is not None and proposal["message_from"] is not None
                and proposal["message_from"] <= message_id <= proposal["message_to"])
            return in_proposal or provenance.is_anchored(conn, message_id)
        return {mid: row for mid, row in latest.items() if mid in gone and learned(mid)}

    def _config(self, persona_id: str, shown: list[CortexFile],
                retracted: dict[int, dict[str, Any]]) -> RequestConfig:
        ctx = self._context
        conn = ctx.db.conn()
        app = ctx.app_settings()
        persona = get_persona(conn, persona_id) or stand_in(persona_id, app.language)
        language = prompts.language_of(persona.language, app.language)
        user_name = prompts.user_name_for(persona, app.user_name, language)
        files = {f.filename: f for f in shown}
        values = {"char_name": persona.name or persona_id, "user_name": user_name,
                  "today": format_day(ctx.now(), language),
                  "message_count": str(len(retracted)),
                  "retracted": _render(conn, retracted, persona.name, user_name),
                  "files": "\n\n".join(render_file(files[name]) for name in CORTEX_FILES
                                       if name in files)}
        return edit_run_request("cortex_reconcile", language, values,
                                model=ctx.model_for(persona), max_tokens=MAX_TOKENS)


def _anchor(row: dict[str, Any]) -> dict[str, Any]:
    return {"message_id": row["message_id"], "session_id": row["session_id"],
            "content_sha256": row["content_sha256"]}


def _render(conn: sqlite3.Connection, retracted: dict[int, dict[str, Any]], char_name: str,
            user_name: str) -> str:
    """Each retracted message (`[cause] name: text`) and what replaced it, fenced as data."""
    texts = retractions.message_texts(
        conn, list(retracted) + [row["replaced_by"] for row in retracted.values()])
    lines = []
    for message_id, row in sorted(retracted.items()):
        message = texts.get(message_id)
        text = message["content"] if message else (row["content"] or "(text no longer kept)")
        role = message["role"] if message else None
        name = {"user": user_name, "assistant": char_name}.get(role or "", "message")
        lines.append(f"[{CAUSES.get(row['cause'], 'retracted')}] {name}: {prompts.fence(text)}")
        replacement = texts.get(row["replaced_by"]) if row["replaced_by"] else None
        if replacement and replacement["content"].strip() and not replacement["streaming"]:
            lines.append(f"  replaced by: {prompts.fence(replacement['content'])}")
    return "\n".join(lines)
