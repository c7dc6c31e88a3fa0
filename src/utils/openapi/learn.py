"""Learning from an imported conversation (issue 24, docs/chat-import.md#learning-from-it)."""
from ..models.conversations import NoFields
from ..models.learn import LearnEstimate, LearnEstimateQuery, LearnRun, LearnStart, LearnStatus
from .table import Op, query_of, table_paths

_BASE = "/api/sessions/{sid}/learn"
_LOCATION = {"Location": {"schema": {"type": "string"}}}

ROUTES = (
    Op("get", _BASE, "The conversation's newest learn run (or null).", LearnStatus,
       errors="404 409",
       description="`409 not_imported` for a conversation that was not imported."),
    Op("post", _BASE, "Learn from the imported conversation: its active branch is read in "
       "windows through the regular cortex update and applied (or, in review mode, proposed) "
       "all at once when every window succeeded.", LearnRun, LearnStart, "400 404 409",
       status="202", headers=_LOCATION, optional_body=True,
       description="`409`: `not_imported`, `nothing_to_learn`, `cortex_disabled`, "
                   "`learn_in_progress` (one learn run per persona at a time)."),
    Op("get", _BASE + "/estimate", "Windows, tokens and cost of learning from the "
       "conversation; nothing runs.", LearnEstimate, errors="400 404 409",
       params=query_of(LearnEstimateQuery)),
    Op("post", _BASE + "/cancel", "Cancel the queued or running learn run: nothing it read is "
       "applied.", LearnRun, NoFields, "400 404 409", optional_body=True,
       description="A queued run ends at once; a running one stops before its next window. "
                   "`409 learn_not_running` when nothing runs or the run is already being "
                   "applied."),
)


def paths() -> dict:
    """The learn paths, per imported session."""
    return table_paths("sessions", ROUTES)
