"""The cortex: files with ETag / If-Match, history, restore, settings and update jobs (§5, §7)."""
from ..models.settings import CortexSettings
from .common import (
    JOB_ID,
    PERSONA_ID,
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
)
from .table import model_ref

_FILENAME = {"type": "string", "enum": ["memory.md", "soul.md", "relationship.md"]}
_AUTHOR = {"type": "string", "enum": ["user", "ai", "template", "restore", "external"]}
_STATUS = {"type": "string", "enum": ["queued", "running", "done", "failed"]}
_INT_OR_NULL = nullable({"type": "integer"})

SCHEMAS = {
    "CortexFile": obj({
        "filename": _FILENAME, "content": {"type": "string"},
        "revision": {"type": "integer", "minimum": 1,
                     "description": "The newest revision's id; also the ETag."},
        "chars": {"type": "integer", "minimum": 0}, "budget": {"type": "integer", "minimum": 1},
        "version": {"type": "integer", "minimum": 1,
                    "description": "The file's own number of this revision (1 for its first), "
                                   "as its history counts them; what the interface shows."},
    }, required=("filename", "content", "revision", "chars", "budget", "version")),
    "Revision": obj({
        "rev": {"type": "integer", "minimum": 1}, "author": _AUTHOR, "created_at": TIMESTAMP,
        "summary": {"type": "string"}, "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "chars": {"type": "integer", "minimum": 0}, "job_id": nullable({"type": "string"}),
        "message_from": _INT_OR_NULL, "message_to": _INT_OR_NULL,
        "reviewed": nullable(obj({"reviewer": {"type": "string"},
                                  "decision": {"type": "string", "enum": ["accepted", "edited"]},
                                  "proposal_id": {"type": "string"}})),
        "source": nullable(ref("RevisionSource")),
        "reverts": nullable({"type": "integer", "description": "A direct revert (no model "
                             "call) names the earliest revision it undoes; the file is back at "
                             "the text of the revision before that one."}),
    }, required=("rev", "author", "created_at", "summary", "sha256")),
    "RevisionSource": obj({
        "kind": {"type": "string", "enum": ["derived", "retracted"],
                 "description": "`derived`: an update learned this revision from the messages;"
                                " `retracted`: a reconciliation removed what came from them."},
        "session_id": {"type": "string", "description": "The session of the newest message."},
        "message_ids": {"type": "array", "items": {"type": "integer"}},
        "sessions": {"type": "array", "items": obj({
            "session_id": {"type": "string"},
            "message_ids": {"type": "array", "items": {"type": "integer"}}},
            required=("session_id", "message_ids")),
            "description": "The messages per session (an update can span sessions)."},
    }, required=("kind", "session_id", "message_ids", "sessions"),
        description="The messages a revision came from (anchoring)."),
    "RevisionDetail": {"allOf": [{"$ref": "#/components/schemas/Revision"}, obj({
        "filename": _FILENAME, "content": {"type": "string"},
        "previous_rev": _INT_OR_NULL,
        "diff": {"type": "string", "description": "Unified diff to the previous revision."},
    }, required=("filename", "content", "previous_rev", "diff"))]},
    "CortexJob": obj({
        "id": {"type": "string", "pattern": JOB_ID},
        "persona_id": {"type": "string", "pattern": PERSONA_ID}, "status": _STATUS,
        "files": {"type": "array", "items": {"type": "string"}},
        "error": nullable({"type": "string"}), "error_message": nullable({"type": "string"}),
        "retryable": {"type": "boolean"},
        "trigger": {"type": "string", "enum": ["threshold", "idle", "manual"]},
        "reason": {"type": "string", "enum": ["threshold", "idle", "manual", "reconcile",
                                              "consolidate"]},
        "proposal_id": nullable({"type": "string", "description": "Review mode: the proposal "
                                 "this job's edits went into (the files were not changed)."}),
        "summary": {"type": "string"}, "usage": nullable({"type": "object"}),
        "message_from": _INT_OR_NULL, "message_to": _INT_OR_NULL, "created_at": TIMESTAMP,
        "started_at": nullable(TIMESTAMP), "finished_at": nullable(TIMESTAMP),
        "attempted": {"type": "array", "description": "The edits a failed run staged, kept for "
                      "inspection and never applied: `{file, action, ...arguments}`.",
                      "items": obj({"file": {"type": "string"}, "action": {"type": "string"}},
                                   required=("file", "action"))},
    }, required=("id", "persona_id", "status", "files", "error")),
    "RevisionConflictError": obj({"error": obj({
        "code": {"const": "revision_conflict"}, "message": {"type": "string"},
        "current": ref("CortexFile"),
    }, required=("code", "message", "current"))}, required=("error",)),
}

_FILE_PARAM = path_param("filename", _FILENAME, "One of the three cortex files.")
_REV_PARAM = path_param("rev", {"type": "integer", "minimum": 0}, "A revision id.")
_ETAG = {"ETag": {"description": "The file's revision, quoted: `\"12\"`.",
                  "schema": {"type": "string"}}}
_IF_MATCH = {"name": "If-Match", "in": "header", "schema": {"type": "string"},
             "description": "The ETag the change is based on (`\"12\"`); `*` means any."}
_CONFLICT = {"412": json_response("The file changed meanwhile; `error.current` is the file now "
                                  "(and the `ETag` its revision).", ref("RevisionConflictError"),
                                  headers=_ETAG)}
_FILE = json_response("The file.", ref("CortexFile"), headers=_ETAG)
_EMPTY_BODY = json_body({"type": "object"}, required=False,
                        description="None, or a JSON object such as `{}` (its fields are ignored).")


def _files() -> dict:
    return {
        "/api/personas/{pid}/cortex": {
            "parameters": [PERSONA_PARAM],
            "get": operation("readCortex", "cortex", "All three files with revisions and sizes.", {
                "200": json_response("The files.", obj({
                    "persona_id": {"type": "string"}, "budget": {"type": "integer"},
                    "hard_cap": {"type": "integer"},
                    "files": {"type": "array", "items": ref("CortexFile"),
                              "minItems": 3, "maxItems": 3},
                }, required=("persona_id", "budget", "hard_cap", "files"))),
                **errors("404")}),
        },
        "/api/personas/{pid}/cortex/{filename}": {
            "parameters": [PERSONA_PARAM, _FILE_PARAM],
            "get": operation(
                "readCortexFile", "cortex", "One file; its ETag is its revision.",
                {"200": _FILE, "304": {"description": "`If-None-Match` still matches.",
                                       "headers": _ETAG}, **errors("404")},
                parameters=[{"name": "If-None-Match", "in": "header",
                             "schema": {"type": "string"}}]),
            "put": operation(
                "writeCortexFile", "cortex", "Replace the file's content (a `user` revision).",
                {"200": _FILE, **_CONFLICT, **errors("400", "404", "428")}, write=True,
                description="Needs `If-Match` (428 without it). Over the hard cap: `413 "
                            "cortex_file_too_large`; nothing is written.",
                parameters=[{**_IF_MATCH, "required": True}],
                requestBody=json_body(obj({"content": {"type": "string"}},
                                          required=("content",)))),
        },
        "/api/personas/{pid}/cortex/{filename}/reset": {
            "parameters": [PERSONA_PARAM, _FILE_PARAM],
            "post": operation("resetCortexFile", "cortex",
                              "Put the template back (a `template` revision).",
                              {"200": _FILE, **_CONFLICT, **errors("400", "404")}, write=True,
                              parameters=[_IF_MATCH], requestBody=_EMPTY_BODY),
        },
        "/api/personas/{pid}/cortex/{filename}/history": {
            "parameters": [PERSONA_PARAM, _FILE_PARAM],
            "get": operation("cortexHistory", "cortex", "The file's revisions, newest first.", {
                "200": json_response("The revisions.", obj({
                    "persona_id": {"type": "string"}, "filename": _FILENAME,
                    "revisions": {"type": "array", "items": ref("Revision")},
                }, required=("persona_id", "filename", "revisions"))),
                **errors("404")}),
        },
        "/api/personas/{pid}/cortex/{filename}/history/{rev}": {
            "parameters": [PERSONA_PARAM, _FILE_PARAM, _REV_PARAM],
            "get": operation("cortexRevision", "cortex",
                             "One revision with its content and a diff to its predecessor.",
                             {"200": json_response("The revision.", ref("RevisionDetail")),
                              **errors("404")}),
        },
        "/api/personas/{pid}/cortex/{filename}/history/{rev}/restore": {
            "parameters": [PERSONA_PARAM, _FILE_PARAM, _REV_PARAM],
            "post": operation("restoreCortexRevision", "cortex",
                              "Make an old revision current again (a `restore` revision).",
                              {"200": _FILE, **_CONFLICT, **errors("400", "404")}, write=True,
                              parameters=[_IF_MATCH], requestBody=_EMPTY_BODY),
        },
    }


def _updates() -> dict:
    settings = json_response("The cortex settings.", model_ref(CortexSettings, "validation"))
    return {
        "/api/cortex/settings": {
            "get": operation("readCortexSettings", "cortex", "Cortex on/off and update timing.",
                             {"200": settings}),
            "put": operation(
                "writeCortexSettings", "cortex", "Change any of the cortex settings.",
                {"200": settings, **errors("400")}, write=True,
                requestBody=json_body(model_ref(CortexSettings, "validation"))),
        },
        "/api/personas/{pid}/cortex/status": {
            "parameters": [PERSONA_PARAM],
            "get": operation("cortexStatus", "cortex",
                             "Progress towards the next update and the job in flight.",
                             {"200": json_response("The status (nothing is triggered).",
                                                   ref("CortexProgress")),
                              **errors("404")}),
        },
        "/api/personas/{pid}/cortex/update": {
            "parameters": [PERSONA_PARAM],
            "post": operation(
                "startCortexUpdate", "cortex", "Queue a cortex update now (joins a queued one).",
                {"202": json_response("Queued.", obj({
                    "job_id": {"type": "string", "pattern": JOB_ID}, "status": _STATUS,
                    "created": {"type": "boolean"}, "job": ref("CortexJob"),
                }, required=("job_id", "status", "created", "job")), headers={
                    "Location": {"schema": {"type": "string"},
                                 "description": "/api/cortex/jobs/<job_id>"}}),
                 **errors("400", "404", "409")}, write=True, requestBody=_EMPTY_BODY),
        },
        "/api/cortex/jobs/{job_id}": {
            "get": operation("readCortexJob", "cortex", "One cortex update job.",
                             {"200": json_response("The job.", ref("CortexJob")),
                              **errors("404")},
                             parameters=[path_param("job_id", {"type": "string",
                                                               "pattern": JOB_ID},
                                                    "A job id.")]),
        },
    }


def paths() -> dict:
    """The cortex paths."""
    return {**_files(), **_updates()}
