"""Cortex updates over REST: start one on demand, and follow its job (DESIGN §7)."""
import re

from flask import Blueprint, Response, jsonify

from ..utils.cortex.trigger import CortexDisabled
from ..utils.models.conversations import NoFields
from ..utils.models.cortex import UpdateQueued
from ..utils.provider import get_cortex_trigger, get_proposal_service
from .errors import ApiError, body
from .guards import existing_persona

bp = Blueprint("cortex_jobs", __name__)
_JOB_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


@bp.get("/api/personas/<pid>/cortex/status", merge_slashes=False)
def read_status(pid: str) -> Response:
    """Progress towards the next update and the job in flight."""
    pid = existing_persona(pid)
    return jsonify({**get_cortex_trigger().status(pid),
                    "proposals_pending": get_proposal_service().count_pending(pid)})


@bp.post("/api/personas/<pid>/cortex/update", merge_slashes=False)
def start_update(pid: str) -> tuple[Response, int]:
    """Queue a cortex update now (joins a queued one)."""
    existing_persona(pid)
    body(NoFields, required=False)
    try:
        job, created = get_cortex_trigger().request_update(pid)
    except CortexDisabled as err:
        raise ApiError(409, "cortex_disabled", str(err)) from None
    queued = UpdateQueued(job_id=job.id, status=job.status, created=created, job=job)
    response = jsonify(queued.model_dump(mode="json"))
    response.headers["Location"] = f"/api/cortex/jobs/{job.id}"
    return response, 202


@bp.get("/api/cortex/jobs/<job_id>", merge_slashes=False)
def read_job(job_id: str) -> Response:
    """One cortex update job."""
    job = get_cortex_trigger().job(job_id) if _JOB_ID.fullmatch(job_id) else None
    if job is None:
        raise ApiError(404, "job_not_found", "No cortex update job with that id.")
    return jsonify(job.model_dump(mode="json"))
