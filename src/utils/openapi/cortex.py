"""The cortex: files with ETag / If-Match, history, restore, settings and update jobs (§5, §7)."""
from ..models.chat import CortexProgress
from ..models.cortex import (
    CortexFile,
    CortexFiles,
    CortexJob,
    FileContent,
    History,
    RevisionConflictError,
    RevisionDetail,
    UpdateQueued,
)
from ..models.settings import CortexSettings
from .common import json_response
from .table import ANY_OBJECT, Op, model_ref, table_paths

_ETAG = {"ETag": {"description": "The file's revision, quoted: `\"12\"`.",
                  "schema": {"type": "string"}}}
_IF_MATCH = {"name": "If-Match", "in": "header", "schema": {"type": "string"},
             "description": "The ETag the change is based on (`\"12\"`); `*` means any."}
_CONFLICT = {"412": json_response("The file changed meanwhile; `error.current` is the file now "
                                  "(and the `ETag` its revision).", model_ref(RevisionConflictError),
                                  headers=_ETAG)}
_FILE = "/api/personas/{pid}/cortex/{filename}"
_REV = _FILE + "/history/{rev}"
ROUTES = (
    Op("get", "/api/personas/{pid}/cortex", "All three files with revisions and sizes.",
       CortexFiles, errors="404"),
    Op("get", _FILE, "One file; its ETag is its revision.", CortexFile, errors="404",
       headers=_ETAG, params=({"name": "If-None-Match", "in": "header",
                              "schema": {"type": "string"}},),
       more={"304": {"description": "`If-None-Match` still matches.", "headers": _ETAG}}),
    Op("put", _FILE, "Replace the file's content (a `user` revision).", CortexFile,
       FileContent, "400 404 428", headers=_ETAG, more=_CONFLICT,
       params=({**_IF_MATCH, "required": True},),
       description="Needs `If-Match` (428 without it). Over the hard cap: `413 "
                   "cortex_file_too_large`; nothing is written."),
    Op("post", _FILE + "/reset", "Put the template back (a `template` revision).", CortexFile,
       ANY_OBJECT, "400 404", headers=_ETAG, more=_CONFLICT, params=(_IF_MATCH,)),
    Op("get", _FILE + "/history", "The file's revisions, newest first.", History,
       errors="404"),
    Op("get", _REV, "One revision with its content and a diff to its predecessor.",
       RevisionDetail, errors="404"),
    Op("post", _REV + "/restore", "Make an old revision current again (a `restore` "
       "revision).", CortexFile, ANY_OBJECT, "400 404", headers=_ETAG, more=_CONFLICT,
       params=(_IF_MATCH,)),
    Op("get", "/api/cortex/settings", "Cortex on/off and update timing.", CortexSettings),
    Op("put", "/api/cortex/settings", "Change any of the cortex settings.", CortexSettings,
       CortexSettings, "400"),
    Op("get", "/api/personas/{pid}/cortex/status", "Progress towards the next update and "
       "the job in flight.", json_response("The status (nothing is triggered).",
                                           model_ref(CortexProgress)), errors="404"),
    Op("post", "/api/personas/{pid}/cortex/update", "Queue a cortex update now (joins a "
       "queued one).", UpdateQueued, ANY_OBJECT, "400 404 409", "202",
       headers={"Location": {"schema": {"type": "string"},
                             "description": "/api/cortex/jobs/<job_id>"}}),
    Op("get", "/api/cortex/jobs/{job_id}", "One cortex update job.", CortexJob, errors="404"),
)


def paths() -> dict:
    """The cortex paths."""
    return table_paths("cortex", ROUTES)
