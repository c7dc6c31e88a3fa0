"""Cortex updates over REST: start one on demand, and follow its job (DESIGN §7)."""
import re

from flask import Blueprint, jsonify

from ..utils.cortex.jobs import get_job, job_for_api
from ..utils.cortex.personas_lookup import persona_exists
from ..utils.cortex.trigger import CortexDisabled
from ..utils.provider import get_cortex_trigger, get_db, get_proposal_service
from .errors import ApiError, json_body
from .guards import persona_id

bp = Blueprint("cortex_jobs", __name__)
_JOB_ID = re.compile(r"[0-9a-f]{32}", re.ASCII)


def _known_persona(pid: str) -> str:
    """`pid` if it names an existing persona; 404 before any lookup otherwise."""
    if not persona_exists(get_db().conn(), persona_id(pid)):
        raise ApiError(404, "persona_not_found", "No persona with that id.")
    return pid


@bp.get("/api/personas/<pid>/cortex/status", merge_slashes=False)
def read_status(pid: str):
    """Progress towards the next update and the job in flight, without triggering anything."""
    pid = _known_persona(pid)
    return jsonify({**get_cortex_trigger().status(pid),
                    "proposals_pending": get_proposal_service().count_pending(pid)})


@bp.post("/api/personas/<pid>/cortex/update", merge_slashes=False)
def start_update(pid: str):
    """Queues an update of the persona's cortex (joins one already queued): 202 with the job."""
    _known_persona(pid)
    json_body(required=False)
    try:
        job, created = get_cortex_trigger().request_update(pid)
    except CortexDisabled as err:
        raise ApiError(409, "cortex_disabled", str(err)) from None
    response = jsonify({"job_id": job["id"], "status": job["status"], "created": created,
                        "job": job_for_api(job)})
    response.headers["Location"] = f"/api/cortex/jobs/{job['id']}"
    return response, 202


@bp.get("/api/cortex/jobs/<job_id>", merge_slashes=False)
def read_job(job_id: str):
    """One update job: `{id, persona_id, status, files, error, ...}`."""
    job = get_job(get_db().conn(), job_id) if _JOB_ID.fullmatch(job_id) else None
    if job is None:
        raise ApiError(404, "job_not_found", "No cortex update job with that id.")
    return jsonify(job_for_api(job))
