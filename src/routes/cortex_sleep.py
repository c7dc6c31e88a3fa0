"""Sleep over REST: consolidation status and "consolidate now", and each file's archive."""
from flask import Blueprint, Response, jsonify, request

from ..utils.cortex.paths import CORTEX_FILES
from ..utils.models.conversations import NoFields
from ..utils.models.review import ArchiveRestore, ConsolidationQueued
from ..utils.provider import get_cortex_service, get_memory_settings, get_sleep_schedule
from .cortex import _expected_revision
from .cortex_review import _RULE, BASE
from .errors import ApiError, body
from .guards import existing_persona as _persona

bp = Blueprint("cortex_sleep", __name__)


def _file(filename: str) -> str:
    if filename not in CORTEX_FILES:
        raise ApiError(404, "cortex_file_not_found", "No cortex file with that name.")
    return filename


@bp.get(BASE + "/sleep", **_RULE)
def read_sleep(pid: str) -> Response:
    """Consolidation schedule, progress and the last consolidation."""
    return jsonify(get_sleep_schedule().status(_persona(pid)))


@bp.post(BASE + "/consolidate", **_RULE)
def consolidate_now(pid: str) -> tuple[Response, int]:
    """Queue a consolidation ("sleep") now."""
    pid = _persona(pid)
    body(NoFields, required=False)
    if not get_memory_settings().cortex().enabled:
        raise ApiError(409, "cortex_disabled",
                       "The cortex is disabled: enable it in the settings first.")
    job, created = get_sleep_schedule().request(pid)
    queued = ConsolidationQueued(job_id=job.id, status=job.status, created=created, job=job)
    response = jsonify(queued.model_dump(mode="json"))
    response.headers["Location"] = f"/api/cortex/jobs/{job.id}"
    return response, 202


@bp.get(BASE + "/<filename>/archive", **_RULE)
def read_archive(pid: str, filename: str) -> Response:
    """What consolidations let go from the file."""
    pid, filename = _persona(pid), _file(filename)
    query = request.args.get("q") or None
    if query is not None and len(query) > 200:
        raise ApiError(400, "invalid_query", "q must be at most 200 characters.")
    entries = get_cortex_service().archive_entries(pid, filename, query)
    return jsonify({"persona_id": pid, "filename": filename, "entries": entries})


@bp.post(BASE + "/<filename>/archive/<int:entry_id>/restore", **_RULE)
def restore_from_archive(pid: str, filename: str, entry_id: int) -> Response:
    """Append an archive entry (or a part of it) to the file (a `restore` revision)."""
    pid, filename = _persona(pid), _file(filename)
    text = body(ArchiveRestore, required=False).text
    if not 0 < entry_id < 2 ** 63:
        raise ApiError(404, "archive_entry_not_found", "No archive entry with that id.")
    service = get_cortex_service()
    try:
        service.restore_archived(pid, filename, entry_id, text,
                                 _expected_revision(required=False))
    except LookupError:
        raise ApiError(404, "archive_entry_not_found", "No archive entry with that id.") from None
    except ValueError as err:
        raise ApiError(400, "invalid_text", str(err)) from None
    info = service.read_file_info(pid, filename)
    response = jsonify(info.model_dump(mode="json"))
    response.set_etag(str(info.revision))
    return response
