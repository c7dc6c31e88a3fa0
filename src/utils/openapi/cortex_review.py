"""Review mode, pins and sleep: per-persona memory settings, proposals, archive (issue 16)."""
from ..models import cortex, review as r, settings
from .common import ANY_OBJECT
from .table import Op, json_response, model_ref

_BASE = "/api/personas/{pid}/cortex"
_ONE = _BASE + "/proposals/{proposal_id}"
_IF_MATCH = {"name": "If-Match", "in": "header", "schema": {"type": "string"},
             "description": "With edited `content`: the file's current revision (`\"12\"`) the "
                            "text was written against; a stale one is `412`."}
_STALE = {"412": json_response("`If-Match` names a revision the file no longer has; "
                               "`error.current` is the file now.",
                               model_ref(cortex.RevisionConflictError))}
_DECISION = {"name": "status", "in": "query",
             "schema": {"type": "string", "enum": ["pending", "accepted", "rejected"]}}
_MEMORY = settings.PersonaMemorySettings
ROUTES = {"cortex": (
    Op("get", _BASE + "/settings", "Review mode and sleep schedule of one persona.", _MEMORY,
       errors="404"),
    Op("put", _BASE + "/settings", "Change any of the persona's memory settings.", _MEMORY,
       _MEMORY, "400 404"),
    Op("get", _BASE + "/{filename}/pins", "The file's pinned blocks and broken-marker "
       "warnings.", r.Pins, errors="404"),
    Op("get", _BASE + "/sleep", "Consolidation schedule, progress and the last consolidation.",
       r.SleepStatus, errors="404"),
    Op("post", _BASE + "/consolidate", "Queue a consolidation (\"sleep\") now.",
       r.ConsolidationQueued, ANY_OBJECT, "400 404 409", "202"),
    Op("get", _BASE + "/{filename}/archive", "What consolidations let go from the file.",
       r.Archive, errors="400 404", params=({"name": "q", "in": "query", "schema": {
           "type": "string"}, "description": "Only entries containing this text (any case)."},)),
    Op("post", _BASE + "/{filename}/archive/{entry_id}/restore", "Append an archive entry "
       "(or a part of it) to the file (a `restore` revision).", cortex.CortexFile,
       r.ArchiveRestore, "400 404", more=_STALE, optional_body=True,
       params=({"name": "If-Match", "in": "header", "schema": {"type": "string"}},)),
    Op("get", _BASE + "/proposals", "The persona's proposals, newest first.", r.ProposalList,
       errors="400 404", params=(_DECISION,)),
    Op("get", _ONE, "One proposal: per file the diff, staleness, conflict.", r.Proposal,
       errors="404"),
    Op("post", _ONE + "/accept", "Apply the proposal (or one file, maybe edited).", r.Proposal,
       r.Acceptance, "400 404 409 413", more=_STALE, optional_body=True, params=(_IF_MATCH,)),
    Op("post", _ONE + "/reject", "Drop the proposal (or one file of it).", r.Proposal,
       r.FileChoice, "400 404 409", optional_body=True),
)}
