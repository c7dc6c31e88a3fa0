"""Review mode, pins and sleep: per-persona memory settings, proposals, archive (issue 16)."""
from ..models.cortex import CortexFile, RevisionConflictError
from ..models.review import (
    Acceptance,
    Archive,
    ArchiveRestore,
    ConsolidationQueued,
    FileChoice,
    Pins,
    Proposal,
    ProposalList,
    SleepStatus,
)
from ..models.settings import PersonaMemorySettings
from .common import json_response
from .table import ANY_OBJECT, Op, model_ref, table_paths

_BASE = "/api/personas/{pid}/cortex"
_ONE = _BASE + "/proposals/{proposal_id}"
_IF_MATCH = {"name": "If-Match", "in": "header", "schema": {"type": "string"},
             "description": "With edited `content`: the file's current revision (`\"12\"`) the "
                            "text was written against; a stale one is `412`."}
_STALE = {"412": json_response("`If-Match` names a revision the file no longer has; "
                               "`error.current` is the file now.",
                               model_ref(RevisionConflictError))}
_DECISION = {"name": "status", "in": "query",
             "schema": {"type": "string", "enum": ["pending", "accepted", "rejected"]}}
ROUTES = (
    Op("get", _BASE + "/settings", "Review mode and sleep schedule of one persona.",
       PersonaMemorySettings, errors="404"),
    Op("put", _BASE + "/settings", "Change any of the persona's memory settings.",
       PersonaMemorySettings, PersonaMemorySettings, "400 404"),
    Op("get", _BASE + "/{filename}/pins", "The file's pinned blocks and broken-marker "
       "warnings.", Pins, errors="404"),
    Op("get", _BASE + "/sleep", "Consolidation schedule, progress and the last "
       "consolidation.", SleepStatus, errors="404"),
    Op("post", _BASE + "/consolidate", "Queue a consolidation (\"sleep\") now.",
       ConsolidationQueued, ANY_OBJECT, "400 404 409", "202"),
    Op("get", _BASE + "/{filename}/archive", "What consolidations let go from the file.",
       Archive, errors="400 404", params=({"name": "q", "in": "query", "schema": {
           "type": "string"}, "description": "Only entries containing this text (any case)."},)),
    Op("post", _BASE + "/{filename}/archive/{entry_id}/restore", "Append an archive entry "
       "(or a part of it) to the file (a `restore` revision).", CortexFile, ArchiveRestore,
       "400 404", more=_STALE, optional_body=True,
       params=({"name": "If-Match", "in": "header", "schema": {"type": "string"}},)),
    Op("get", _BASE + "/proposals", "The persona's proposals, newest first.", ProposalList,
       errors="400 404", params=(_DECISION,)),
    Op("get", _ONE, "One proposal: per file the diff, staleness, conflict.", Proposal,
       errors="404"),
    Op("post", _ONE + "/accept", "Apply the proposal (or one file, maybe edited).", Proposal,
       Acceptance, "400 404 409 413", more=_STALE, optional_body=True, params=(_IF_MATCH,),
       description="Accepting creates `ai` revisions noting the review. A stale file is "
                   "replayed on the current text; if its edits no longer apply: `409 "
                   "proposal_conflict` with `error.files` (the conflict view). Already "
                   "decided: `409 proposal_decided`."),
    Op("post", _ONE + "/reject", "Drop the proposal (or one file of it).", Proposal,
       FileChoice, "400 404 409", optional_body=True),
)


def paths() -> dict:
    """The review-mode paths."""
    return table_paths("cortex", ROUTES)
