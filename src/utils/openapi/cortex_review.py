"""Review mode, pins and sleep: per-persona memory settings, proposals, archive (issue 16)."""
from ...routes import cortex_review, cortex_sleep
from ..models import conversations as cv, cortex, review as r, settings
from .table import Op, header, json_response, model_ref, query

_IF_MATCH = header("If-Match", "With edited `content`: the file's current revision (`\"12\"`) "
                   "the text was written against; a stale one is `412`.")
_STALE = {"412": json_response("`If-Match` names a revision the file no longer has; "
                               "`error.current` is the file now.",
                               model_ref(cortex.RevisionConflictError))}
_DECISION = query("status", {"type": "string", "enum": ["pending", "accepted", "rejected"]})
_MEMORY = settings.PersonaMemorySettings
ROUTES = {"cortex": (
    Op(cortex_review.read_memory_settings, _MEMORY, errors="404"),
    Op(cortex_review.write_memory_settings, _MEMORY, _MEMORY, "400 404"),
    Op(cortex_review.read_pins, r.Pins, errors="404"),
    Op(cortex_sleep.read_sleep, r.SleepStatus, errors="404"),
    Op(cortex_sleep.consolidate_now, r.ConsolidationQueued, cv.NoFields, "400 404 409", "202",
       optional_body=True),
    Op(cortex_sleep.read_archive, r.Archive, errors="400 404",
       params=(query("q", None, "Only entries containing this text (any case)."),)),
    Op(cortex_sleep.restore_from_archive, cortex.CortexFile, r.ArchiveRestore, "400 404",
       more=_STALE, optional_body=True, params=(header("If-Match"),)),
    Op(cortex_review.list_proposals, r.ProposalList, errors="400 404", params=(_DECISION,)),
    Op(cortex_review.read_proposal, r.Proposal, errors="404 503"),
    Op(cortex_review.accept_proposal, r.Proposal, r.Acceptance, "400 404 409 413 503",
       more=_STALE, optional_body=True, params=(_IF_MATCH,)),
    Op(cortex_review.reject_proposal, r.Proposal, r.FileChoice, "400 404 409 503",
       optional_body=True),
)}
