"""What every cortex run (update, reconciliation, consolidation) returns to the worker, the
guard its apply runs under, and how a consolidated file's revision is summarised: shared by
the runs, so none of them imports another."""
from typing import Any

from ..storage import cortex_jobs
from .personas_lookup import persona_exists
from .staged_apply import Guard
from .staging import StagedFile
from .tools import CortexToolbox

RETRYABLE = {"rate_limited", "overloaded", "timeout", "connection_error", "api_error",
             "interrupted", "internal_error"}


def run_result(success: bool, toolbox: CortexToolbox | None = None,
               revisions: dict[str, int] | None = None) -> dict[str, Any]:
    """The result shape of a run (`success`, `files`, `updates` with each file's revision…)."""
    revisions = revisions or {}
    return {"success": success, "summary": "", "error": None, "error_message": None,
            "retryable": False, "files": list(revisions),
            "updates": [{"file": c.filename, "action": c.action,
                         "revision": revisions.get(c.filename)}
                        for c in (toolbox.changes if toolbox and revisions else [])],
            "usage": None, "message_range": None}


def run_failure(code: str, message: str) -> dict[str, Any]:
    """A failed run's result (retryable when `code` says a later try may work)."""
    return {**run_result(False), "error": code, "error_message": message,
            "retryable": code in RETRYABLE}


def job_guard(persona_id: str, job_id: str) -> Guard:
    """Applies (or proposes) only while the persona exists and the job still holds its lease."""
    return lambda conn: (persona_exists(conn, persona_id)
                         and cortex_jobs.still_running(conn, job_id))


def consolidated_summary(staged_file: StagedFile) -> str:
    """The revision summary of a consolidated file."""
    return (f"consolidated: {len(staged_file.base_content):,} → "
            f"{len(staged_file.content):,} characters")
