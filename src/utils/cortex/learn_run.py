"""LearnRunner: a learn job reads an imported history in windows, all-or-nothing.

Each window goes through the regular update request (`CortexUpdateService.request_for`: the
persona, the files with their meters, the window's messages fenced as data, the four tools);
all windows edit ONE staged copy, so window k sees what windows 1..k-1 learned. Nothing is
applied until the last window succeeded: then one `apply_staged` makes the whole run visible
(one `ai` revision per changed file, anchored to every imported message the run read), or in
review mode one proposal holds it. A cancel request is read before every window and again by
the apply's guard, inside the transaction that would record the revisions; a failure, a cancel,
a lost lease or a killed process therefore leaves the cortex exactly as it was. A learn run never
moves the processed mark: imported messages are not part of the regular update's count.
"""
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api_request.types import RequestConfig
from ..models.cortex import CortexFile, CortexJob
from ..storage import provenance
from . import learn_runs
from .errors import PersonaNotFound
from .run_context import RunContext
from .run_outcome import job_guard
from .settings import load_cortex_settings
from .staged_apply import Guard, NotApplied
from .staging import StagedEdits, StagingConflict
from .tools import CortexToolbox

log = logging.getLogger(__name__)
SUMMARIES = 20  # window summaries kept in the run's summary (a history may have thousands)


class LearnRunner:
    """Runs learn jobs (reason `learn`) through the update service's request and staging.

    `run` is the cortex runs' shared context (run_context.py); `request_for(persona_id, files,
    messages)` builds the regular update request (CortexUpdateService.request_for), and
    `max_chars` is the update's character limit a window stays under. Both are handed in, so
    this module does not import update.py (which builds it)."""

    def __init__(self, run: RunContext,
                 request_for: Callable[[str, dict[str, CortexFile], list[dict[str, Any]]],
                                       RequestConfig],
                 max_chars: int) -> None:
        self._run, self._request_for, self._max_chars = run, request_for, max_chars

    def run(self, job: CortexJob) -> dict[str, Any]:
        """Reads every window of the job's imported session, then applies (or proposes) the
        result as one group; returns the worker's result dict."""
        conn, job_id, pid = self._run.db.conn(), job.id, job.persona_id
        run = learn_runs.get_run(conn, job_id)
        if run is None:
            return _failed("internal_error", "The learn run has no record.", retryable=False)
        windows = self.windows(run.session_id, run.window_messages)
        learn_runs.set_windows(conn, job_id, len(windows), sum(w["count"] for w in windows))
        if not load_cortex_settings(conn).enabled:
            return _failed("cortex_disabled", "The cortex is disabled in the settings.",
                           retryable=False)
        if not getattr(self._run.api, "is_ready", False):
            return _failed("not_configured", "No API key configured: add one in Settings.",
                           retryable=False)
        staged, shown, review = self._run.staged_run(pid)
        learned = _Learned()
        for index, span in enumerate(windows):
            if learn_runs.cancelled(conn, job_id):
                return _cancelled(staged, learned.usage)
            window = learn_runs.window_messages(conn, run.session_id, span["first"],
                                                span["last"])  # [] if deleted meanwhile
            if window:
                log.info("Learn run %s for %s: window %d of %d (messages %d..%d)", job_id, pid,
                         index + 1, len(windows), window[0]["id"], window[-1]["id"])
                failure = self._read(job, staged, shown, review, window, learned)
                if failure is not None:
                    return failure
            learn_runs.note_progress(conn, job_id, index + 1)
        return self._finish(job, staged, review, learned)

    def _read(self, job: CortexJob, staged: StagedEdits, shown: list[CortexFile],
              review: bool, window: list[dict[str, Any]],
              learned: "_Learned") -> dict[str, Any] | None:
        """One window through the update request, its edits staged on top of the earlier
        windows'; the failure result, or None."""
        files: dict[str, CortexFile] = {f.filename: f for f in staged.shown(shown)}
        toolbox = CortexToolbox(self._run.cortex, staged, follow_files=not review)
        response = self._run.api.tool_request(
            self._request_for(job.persona_id, files, window), toolbox)
        learned.add_usage(response.usage)
        if not response.success:
            return self._run.failed(job.persona_id, job.id, toolbox,
                                       response.error or "api_error", response.error_message,
                                       bool(response.retryable), learned.usage)
        learned.add(window, {change.filename for change in toolbox.changes},
                    (response.content or "").strip())
        return None

    def windows(self, session_id: str, window_messages: int) -> list[dict[str, Any]]:
        """The session's imported active branch cut into windows `{first, last, count, chars,
        bytes}` (learn_runs.split_windows); a window's text is read only when it runs."""
        return learn_runs.windows_off_loop(self._run.db.path, session_id, window_messages,
                                           self._max_chars)

    def _finish(self, job: CortexJob, staged: StagedEdits, review: bool,
                learned: "_Learned") -> dict[str, Any]:
        """One apply (or one proposal) for the whole run; each file's revision is anchored to
        the windows that edited it (a proposal, accepted as one, to every window read)."""
        job_id, pid = job.id, job.persona_id
        sources, by_file, usage, summary = (learned.sources, learned.by_file, learned.usage,
                                            learned.summary())
        guard = _guard(pid, job_id)
        try:
            if review:
                proposal_id = self._run.proposals.propose(
                    staged, job_id=job_id, kind="update", summary=summary, usage=usage,
                    guard=guard, sources=sources)
                return {"success": True, "summary": summary, "usage": usage, "files": [],
                        "proposal_id": proposal_id}
            revisions = self._run.cortex.apply_staged(
                staged, job_id=job_id, message_range=None, summary=summary,
                outcome={"summary": summary, "usage": usage}, guard=guard, sources=sources,
                sources_for=lambda name: by_file.get(name) or sources)
        except StagingConflict as err:
            return _failed("edit_conflict", f"{err.filename} was edited while learning ran and "
                           "its edits no longer fit; nothing was applied. Start again.",
                           attempted=staged.attempted(), usage=usage)
        except (NotApplied, PersonaNotFound):
            if learn_runs.cancelled(self._run.db.conn(), job_id):
                return _cancelled(staged, usage)
            return _failed("interrupted", "The learn run lost its job (persona deleted or lease "
                           "expired); nothing was applied.", attempted=staged.attempted(),
                           usage=usage)
        return {"success": True, "summary": summary, "usage": usage, "files": list(revisions)}


def _guard(persona_id: str, job_id: str) -> Guard:
    """Applies only while the persona exists, the job holds its lease and nobody cancelled."""
    held = job_guard(persona_id, job_id)
    return lambda conn: held(conn) and not learn_runs.cancelled(conn, job_id)


@dataclass
class _Learned:
    """What the windows read so far left: anchors (all, and per file edited), summaries, usage."""

    sources: list[dict[str, Any]] = field(default_factory=list)
    by_file: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)

    def add(self, window: list[dict[str, Any]], edited: set[str], summary: str) -> None:
        """A window that succeeded: its messages anchor the files it edited."""
        anchors = [provenance.source_of(m) for m in window]
        self.sources += anchors
        for name in edited:
            self.by_file.setdefault(name, []).extend(anchors)
        if summary:
            self.summaries.append(summary)

    def add_usage(self, usage: Mapping[str, object] | None) -> None:
        """Sums the token counts of every request (whatever else a usage holds is skipped)."""
        for key, value in (usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = self.usage.get(key, 0) + value

    def summary(self) -> str:
        """The revisions' summary: the windows' own, the first SUMMARIES of them."""
        head = "Learned from an imported history"
        if not self.summaries:
            return head + "."
        more = len(self.summaries) - SUMMARIES
        return f"{head}: {' '.join(self.summaries[:SUMMARIES])}" + (
            f" (and {more} more windows)" if more > 0 else "")


def _cancelled(staged: StagedEdits, usage: dict[str, int]) -> dict[str, Any]:
    return _failed("cancelled", learn_runs.CANCELLED_MESSAGE, retryable=False,
                   attempted=staged.attempted(), usage=usage)


def _failed(code: str, message: str, *, retryable: bool = True,
            attempted: list[dict[str, Any]] | None = None,
            usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {"success": False, "error": code, "error_message": message, "retryable": retryable,
            "attempted": attempted, "usage": usage or None, "files": []}
