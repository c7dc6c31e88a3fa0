"""Review mode over REST: a persona's memory settings and its proposals (accept, edit, reject).

Thin views: ids are checked, the persona must exist, ProposalService does the work; its errors
become JSON errors in one place (routes/errors.py, `DOMAIN_ERRORS`).
"""
import re

from flask import Blueprint, Response, jsonify, request

from ..utils.cortex import pins
from ..utils.cortex.paths import CORTEX_FILES
from ..utils.models.review import Acceptance, FileChoice
from ..utils.provider import get_cortex_service, get_memory_settings, get_proposal_service
from .cortex import _expected_revision
from .errors import ApiError, body, json_body
from .guards import existing_persona as _persona

bp = Blueprint("cortex_review", __name__)
BASE = "/api/personas/<pid>/cortex"
_PROPOSAL_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)
_RULE = {"merge_slashes": False}


def _proposal_id(value: str) -> str:
    if not _PROPOSAL_ID.fullmatch(value):
        raise ApiError(404, "proposal_not_found", "No proposal with that id for this persona.")
    return value


@bp.get(BASE + "/settings", **_RULE)
def read_memory_settings(pid: str) -> Response:
    """Review mode and sleep schedule of one persona."""
    return jsonify(get_memory_settings().persona(_persona(pid)).model_dump())


@bp.put(BASE + "/settings", **_RULE)
def write_memory_settings(pid: str) -> Response:
    """Change any of the persona's memory settings."""
    pid = _persona(pid)
    return jsonify(get_memory_settings().update_persona(pid, json_body()).model_dump())


@bp.get(BASE + "/proposals", **_RULE)
def list_proposals(pid: str) -> Response:
    """The persona's proposals, newest first."""
    pid = _persona(pid)
    status = request.args.get("status")
    if status not in (None, "pending", "accepted", "rejected"):
        raise ApiError(400, "invalid_status", "status must be pending, accepted or rejected.")
    service = get_proposal_service()
    return jsonify({"persona_id": pid, "pending": service.count_pending(pid),
                    "proposals": [p.model_dump(mode="json")
                                  for p in service.list_proposals(pid, status)]})


@bp.get(BASE + "/proposals/<proposal_id>", **_RULE)
def read_proposal(pid: str, proposal_id: str) -> Response:
    """One proposal: per file the diff, staleness, conflict."""
    pid = _persona(pid)
    proposal = get_proposal_service().detail(pid, _proposal_id(proposal_id))
    return jsonify(proposal.model_dump(mode="json"))


@bp.post(BASE + "/proposals/<proposal_id>/accept", **_RULE)
def accept_proposal(pid: str, proposal_id: str) -> Response:
    """Apply the proposal (or one file, maybe edited)."""
    pid, proposal_id = _persona(pid), _proposal_id(proposal_id)
    choice = body(Acceptance, required=False)
    filename, content = choice.filename, choice.content
    expected = _expected_revision(required=False)
    accepted = get_proposal_service().accept(pid, proposal_id, filename=filename,
                                             content=content, expected_revision=expected)
    return jsonify(accepted.model_dump(mode="json"))


@bp.post(BASE + "/proposals/<proposal_id>/reject", **_RULE)
def reject_proposal(pid: str, proposal_id: str) -> Response:
    """Drop the proposal (or one file of it)."""
    pid, proposal_id = _persona(pid), _proposal_id(proposal_id)
    filename = body(FileChoice, required=False).filename
    rejected = get_proposal_service().reject(pid, proposal_id, filename=filename)
    return jsonify(rejected.model_dump(mode="json"))


@bp.get(BASE + "/<filename>/pins", **_RULE)
def read_pins(pid: str, filename: str) -> Response:
    """The file's pinned blocks and broken-marker warnings."""
    pid = _persona(pid)
    if filename not in CORTEX_FILES:
        raise ApiError(404, "cortex_file_not_found", "No cortex file with that name.")
    info = get_cortex_service().read_file_info(pid, filename)
    spans, warnings = pins.parse(info.content)
    return jsonify({"filename": filename, "revision": info.revision,
                    "pins": [span.to_dict() for span in spans], "warnings": warnings})
