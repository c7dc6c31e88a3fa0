"""The cortex: files with ETag / If-Match, history, restore, settings and update jobs (§5, §7)."""
from ...routes import cortex, cortex_jobs
from ..models import chat, conversations as cv, cortex as c, settings
from .table import Op, header, json_response, model_ref

_ETAG = {"ETag": {"description": "The file's revision, quoted: `\"12\"`.",
                  "schema": {"type": "string"}}}
_IF_MATCH = header("If-Match", "The ETag the change is based on (`\"12\"`); `*` means any.")
_CONFLICT = {"412": json_response("The file changed meanwhile; `error.current` is the file now "
                                  "(and the `ETag` its revision).",
                                  model_ref(c.RevisionConflictError), headers=_ETAG)}
ROUTES = {"cortex": (
    Op(cortex.read_cortex, c.CortexFiles, errors="404"),
    Op(cortex.read_file, c.CortexFile, errors="404", headers=_ETAG,
       params=(header("If-None-Match"),),
       more={"304": {"description": "`If-None-Match` still matches.", "headers": _ETAG}}),
    Op(cortex.write_file, c.CortexFile, c.FileContent, "400 404 428", headers=_ETAG,
       more=_CONFLICT, params=({**_IF_MATCH, "required": True},)),
    Op(cortex.reset_file, c.CortexFile, cv.NoFields, "400 404", headers=_ETAG, more=_CONFLICT,
       optional_body=True, params=(_IF_MATCH,)),
    Op(cortex.file_history, c.History, errors="404"),
    Op(cortex.file_revision, c.RevisionDetail, errors="404 503"),
    Op(cortex.restore_revision, c.CortexFile, cv.NoFields, "400 404", headers=_ETAG, more=_CONFLICT,
       optional_body=True, params=(_IF_MATCH,)),
    Op(cortex.read_settings, settings.CortexSettings),
    Op(cortex.write_settings, settings.CortexSettings, settings.CortexSettings, "400"),
    Op(cortex_jobs.read_status,
       json_response("The status (nothing is triggered).", model_ref(chat.CortexProgress)),
       errors="404"),
    Op(cortex_jobs.start_update, c.UpdateQueued, cv.NoFields, "400 404 409", "202",
       optional_body=True,
       headers={"Location": {
           "schema": {"type": "string"}, "description": "/api/cortex/jobs/<job_id>"}}),
    Op(cortex_jobs.read_job, c.CortexJob, errors="404"),
)}
