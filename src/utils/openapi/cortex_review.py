"""Review mode, pins and sleep: per-persona memory settings, proposals, archive (issue 16)."""
from ..models.settings import PersonaMemorySettings
from .common import (
    PERSONA_PARAM,
    TIMESTAMP,
    errors,
    json_body,
    json_response,
    nullable,
    obj,
    operation,
    path_param,
    ref,
    ref as _ref,
)
from .table import model_ref

_FILENAME = {"type": "string", "enum": ["memory.md", "soul.md", "relationship.md"]}
_DECISION = {"type": "string", "enum": ["pending", "accepted", "rejected"]}
_INT_OR_NULL = nullable({"type": "integer"})
_STR_OR_NULL = nullable({"type": "string"})
_PROPOSAL_PARAM = path_param("proposal_id", {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                             "A proposal id.")
_IF_MATCH = {"name": "If-Match", "in": "header", "schema": {"type": "string"},
             "description": "With edited `content`: the file's current revision (`\"12\"`) the "
                            "text was written against; a stale one is `412`."}
_FILE_CHOICE = json_body(obj({"filename": _FILENAME}, additional=False), required=False,
                         description="None or `{}` for every pending file; `{filename}` for one.")

SCHEMAS = {
    "ProposalSummary": obj({
        "id": {"type": "string"}, "persona_id": {"type": "string"}, "status": _DECISION,
        "job_ids": {"type": "array", "items": {"type": "string"}},
        "kinds": {"type": "array", "items": {"type": "string", "enum": ["update",
                                                                       "consolidate"]}},
        "summary": {"type": "string"}, "message_from": _INT_OR_NULL, "message_to": _INT_OR_NULL,
        "created_at": TIMESTAMP, "updated_at": TIMESTAMP, "decided_at": nullable(TIMESTAMP),
        "files": {"type": "array", "items": obj({"filename": _FILENAME, "status": _DECISION,
                                                 "base_revision": {"type": "integer"},
                                                 "revision": _INT_OR_NULL})},
    }, required=("id", "persona_id", "status", "summary", "files")),
    "ProposalFile": obj({
        "filename": _FILENAME, "status": _DECISION, "base_revision": {"type": "integer"},
        "current_revision": {"type": "integer"}, "content": {"type": "string"},
        "diff": {"type": "string", "description": "Unified diff base → proposed (history style)."},
        "stale": {"type": "boolean", "description": "The file changed since the proposal."},
        "conflict": {"type": "boolean",
                     "description": "Stale, and its edits no longer apply to the current text."},
        "rebased": {**_STR_OR_NULL, "description": "What accepting a stale file would produce."},
        "current_content": _STR_OR_NULL, "revision": _INT_OR_NULL, "review": _STR_OR_NULL,
    }, required=("filename", "status", "base_revision", "current_revision", "content", "diff",
                 "stale", "conflict")),
    "Proposal": {"allOf": [ref("ProposalSummary"), obj({
        "stale": {"type": "boolean"},
        "files": {"type": "array", "items": ref("ProposalFile")}}, required=("files",))]},
}


def paths() -> dict:
    """The review-mode paths."""
    settings = json_response("The persona's memory settings.",
                             model_ref(PersonaMemorySettings, "validation"))
    proposal = json_response("The proposal.", ref("Proposal"))
    base = "/api/personas/{pid}/cortex"
    return {
        base + "/settings": {
            "parameters": [PERSONA_PARAM],
            "get": operation("readMemorySettings", "cortex",
                             "Review mode and sleep schedule of one persona.",
                             {"200": settings, **errors("404")}),
            "put": operation("writeMemorySettings", "cortex",
                             "Change any of the persona's memory settings.",
                             {"200": settings, **errors("400", "404")}, write=True,
                             requestBody=json_body(model_ref(PersonaMemorySettings,
                                                             "validation"))),
        },
        base + "/{filename}/pins": {
            "parameters": [PERSONA_PARAM, path_param("filename", _FILENAME, "A cortex file.")],
            "get": operation(
                "readPins", "cortex", "The file's pinned blocks and broken-marker warnings.",
                {"200": json_response("Pins (character offsets, end exclusive; 1-based lines).",
                                      obj({"filename": _FILENAME, "revision": {"type": "integer"},
                                           "pins": {"type": "array", "items": obj({
                                               "start": {"type": "integer"},
                                               "end": {"type": "integer"},
                                               "first_line": {"type": "integer"},
                                               "last_line": {"type": "integer"},
                                               "chars": {"type": "integer"}})},
                                           "warnings": {"type": "array", "items": obj({
                                               "line": {"type": "integer"},
                                               "message": {"type": "string"}})}},
                                          required=("filename", "revision", "pins",
                                                    "warnings"))),
                 **errors("404")}),
        },
        base + "/sleep": {
            "parameters": [PERSONA_PARAM],
            "get": operation("readSleep", "cortex",
                             "Consolidation schedule, progress and the last consolidation.",
                             {"200": json_response("The sleep status.", obj({
                                 "sleep_enabled": {"type": "boolean"},
                                 "sleep_sessions": {"type": "integer"},
                                 "sleep_hours": {"type": "integer"},
                                 "sessions_since": {"type": "integer"},
                                 "hours_since": nullable({"type": "number"}),
                                 "over_budget": {"type": "boolean"},
                                 "due": nullable({"type": "string",
                                                  "enum": ["budget", "schedule"]}),
                                 "job_id": _STR_OR_NULL,
                                 "last_consolidation": nullable({"type": "object"})},
                                 required=("sleep_enabled", "due", "last_consolidation"))),
                              **errors("404")}),
        },
        base + "/consolidate": {
            "parameters": [PERSONA_PARAM],
            "post": operation(
                "consolidateNow", "cortex", "Queue a consolidation (\"sleep\") now.",
                {"202": json_response("Queued (a job with reason `consolidate`).", obj({
                    "job_id": {"type": "string"}, "status": {"type": "string"},
                    "created": {"type": "boolean"}, "job": _ref("CortexJob")},
                    required=("job_id", "status", "created", "job"))),
                 **errors("400", "404", "409")}, write=True,
                requestBody=json_body({"type": "object"}, required=False)),
        },
        base + "/{filename}/archive": {
            "parameters": [PERSONA_PARAM, path_param("filename", _FILENAME, "A cortex file.")],
            "get": operation(
                "readArchive", "cortex", "What consolidations let go from the file.",
                {"200": json_response("Entries, newest first.", obj({
                    "persona_id": {"type": "string"}, "filename": _FILENAME,
                    "entries": {"type": "array", "items": obj({
                        "id": {"type": "integer"}, "text": {"type": "string"},
                        "chars": {"type": "integer"}, "job_id": _STR_OR_NULL,
                        "revision_before": _INT_OR_NULL, "revision_after": _INT_OR_NULL,
                        "created_at": TIMESTAMP, "restored_at": nullable(TIMESTAMP),
                        "restored_revision": _INT_OR_NULL})}},
                    required=("persona_id", "filename", "entries"))), **errors("400", "404")},
                parameters=[{"name": "q", "in": "query", "schema": {"type": "string"},
                             "description": "Only entries containing this text (any case)."}]),
        },
        base + "/{filename}/archive/{entry_id}/restore": {
            "parameters": [PERSONA_PARAM, path_param("filename", _FILENAME, "A cortex file."),
                           path_param("entry_id", {"type": "integer", "minimum": 0},
                                      "An archive entry id.")],
            "post": operation(
                "restoreFromArchive", "cortex",
                "Append an archive entry (or a part of it) to the file (a `restore` revision).",
                {"200": json_response("The file.", _ref("CortexFile")),
                 **errors("400", "404"),
                 "412": json_response("`If-Match` is stale.", _ref("RevisionConflictError"))},
                write=True, parameters=[{"name": "If-Match", "in": "header",
                                         "schema": {"type": "string"}}],
                requestBody=json_body(obj({"text": {"type": "string"}}, additional=False),
                                      required=False)),
        },
        base + "/proposals": {
            "parameters": [PERSONA_PARAM],
            "get": operation(
                "listProposals", "cortex", "The persona's proposals, newest first.",
                {"200": json_response("The proposals.", obj({
                    "persona_id": {"type": "string"}, "pending": {"type": "integer"},
                    "proposals": {"type": "array", "items": ref("ProposalSummary")}},
                    required=("persona_id", "pending", "proposals"))), **errors("400", "404")},
                parameters=[{"name": "status", "in": "query", "schema": _DECISION}]),
        },
        base + "/proposals/{proposal_id}": {
            "parameters": [PERSONA_PARAM, _PROPOSAL_PARAM],
            "get": operation("readProposal", "cortex",
                             "One proposal: per file the diff, staleness, conflict.",
                             {"200": proposal, **errors("404")}),
        },
        base + "/proposals/{proposal_id}/accept": {
            "parameters": [PERSONA_PARAM, _PROPOSAL_PARAM],
            "post": operation(
                "acceptProposal", "cortex", "Apply the proposal (or one file, maybe edited).",
                {"200": proposal, **errors("400", "404", "409", "413"),
                 "412": json_response("`If-Match` names a revision the file no longer has; "
                                      "`error.current` is the file now.",
                                      _ref("RevisionConflictError"))}, write=True,
                description="Accepting creates `ai` revisions noting the review. A stale file "
                            "is replayed on the current text; if its edits no longer apply: "
                            "`409 proposal_conflict` with `error.files` (the conflict view). "
                            "Already decided: `409 proposal_decided`.",
                parameters=[_IF_MATCH],
                requestBody=json_body(obj({"filename": _FILENAME, "content": {"type": "string"}},
                                          additional=False), required=False)),
        },
        base + "/proposals/{proposal_id}/reject": {
            "parameters": [PERSONA_PARAM, _PROPOSAL_PARAM],
            "post": operation("rejectProposal", "cortex",
                              "Drop the proposal (or one file of it).",
                              {"200": proposal, **errors("400", "404", "409")}, write=True,
                              requestBody=_FILE_CHOICE),
        },
    }
