"""Cortex files over REST (DESIGN §7): read, edit with ETag/If-Match, history, restore, settings.

Views are thin: they validate the ids, check that the persona exists, and call CortexService;
the service's errors become JSON errors in one place (routes/errors.py, `DOMAIN_ERRORS`).
"""
import re

from flask import Blueprint, Response, current_app, jsonify, request

from ..utils.cortex.paths import validate_filename
from ..utils.models.conversations import NoFields
from ..utils.models.cortex import CortexFile, FileContent
from ..utils.provider import get_cortex_service, get_memory_settings
from .errors import ApiError, body, json_body

bp = Blueprint("cortex", __name__)
FILE_URL = "/api/personas/<pid>/cortex/<filename>"
_ETAG = re.compile(r'"([0-9]{1,18})"')
# An id with encoded slashes ("..%2f%2f") must be a 404, not a redirect to a "merged" path.
_RULE = {"merge_slashes": False}


@bp.get("/api/personas/<pid>/cortex", **_RULE)
def read_cortex(pid: str) -> Response:
    """All three files with revisions and sizes."""
    service = get_cortex_service()
    files = service.read_all_info(_persona(pid))
    return jsonify({"persona_id": pid, "budget": service.budget, "hard_cap": service.hard_cap,
                    "files": [f.model_dump(mode="json") for f in files]})


@bp.get(FILE_URL, **_RULE)
def read_file(pid: str, filename: str) -> Response:
    """One file; its ETag is its revision."""
    pid, filename = _persona(pid), _filename(filename)
    info = get_cortex_service().read_file_info(pid, filename)
    if request.if_none_match.contains(str(info.revision)):
        response = current_app.response_class(status=304)
        response.set_etag(str(info.revision))
        return response
    return _file_response(info)


@bp.put(FILE_URL, **_RULE)
def write_file(pid: str, filename: str) -> Response:
    """Replace the file's content (a `user` revision)."""
    pid, filename = _persona(pid), _filename(filename)
    expected = _expected_revision(required=True)
    content = body(FileContent).content
    service = get_cortex_service()
    service.write_file(pid, filename, content, author="user", expected_revision=expected)
    return _file_response(service.read_file_info(pid, filename))


@bp.post(FILE_URL + "/reset", **_RULE)
def reset_file(pid: str, filename: str) -> Response:
    """Put the template back (a `template` revision)."""
    pid, filename = _persona(pid), _filename(filename)
    body(NoFields, required=False)
    service = get_cortex_service()
    service.reset(pid, filename, expected_revision=_expected_revision(required=False))
    return _file_response(service.read_file_info(pid, filename))


@bp.get(FILE_URL + "/history", **_RULE)
def file_history(pid: str, filename: str) -> Response:
    """The file's revisions, newest first."""
    pid, filename = _persona(pid), _filename(filename)
    revisions = get_cortex_service().history(pid, filename)
    return jsonify({"persona_id": pid, "filename": filename,
                    "revisions": [r.model_dump(mode="json") for r in revisions]})


@bp.get(FILE_URL + "/history/<int:rev>", **_RULE)
def file_revision(pid: str, filename: str, rev: int) -> Response:
    """One revision with its content and a diff to its predecessor."""
    pid, filename = _persona(pid), _filename(filename)
    return jsonify(get_cortex_service().get_revision(pid, filename, rev).model_dump(mode="json"))


@bp.post(FILE_URL + "/history/<int:rev>/restore", **_RULE)
def restore_revision(pid: str, filename: str, rev: int) -> Response:
    """Make an old revision current again (a `restore` revision)."""
    pid, filename = _persona(pid), _filename(filename)
    body(NoFields, required=False)
    service = get_cortex_service()
    service.restore(pid, filename, rev, expected_revision=_expected_revision(required=False))
    return _file_response(service.read_file_info(pid, filename))


@bp.get("/api/cortex/settings", **_RULE)
def read_settings() -> Response:
    """Cortex on/off and update timing."""
    return jsonify(get_memory_settings().cortex().model_dump())


@bp.put("/api/cortex/settings", **_RULE)
def write_settings() -> Response:
    """Change any of the cortex settings."""
    return jsonify(get_memory_settings().update_cortex(json_body()).model_dump())


def _persona(pid: str) -> str:
    return get_cortex_service().require_persona(pid)


def _filename(filename: str) -> str:
    return validate_filename(filename)


def _expected_revision(required: bool) -> int | None:
    """The revision named by `If-Match` ("*" means any); a tag that is no revision never matches."""
    header = request.headers.get("If-Match")
    if header is None:
        if required:
            raise ApiError(428, "precondition_required",
                           "Send If-Match with the ETag you read (e.g. If-Match: \"12\"), so a "
                           "change made meanwhile is not overwritten.")
        return None
    tags = [tag.strip() for tag in header.split(",") if tag.strip()]
    if tags == ["*"]:
        return None
    if len(tags) != 1:
        raise ApiError(400, "invalid_if_match", "Send exactly one ETag in If-Match.")
    match = _ETAG.fullmatch(tags[0])
    return int(match.group(1)) if match else 0


def _file_response(info: CortexFile) -> Response:
    response = jsonify(info.model_dump(mode="json"))
    response.set_etag(str(info.revision))
    return response

