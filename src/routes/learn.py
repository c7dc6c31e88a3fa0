"""Learning from an imported conversation over REST (issue 24): thin views over
HistoryLearning (docs/chat-import.md, "Learning from it")."""
import re

from flask import Blueprint, Response, jsonify, request

from ..utils.models.conversations import NoFields
from ..utils.models.learn import MAX_WINDOW, MIN_WINDOW, LearnStart
from ..utils.provider import get_history_learning
from ..utils.services.errors import invalid
from .errors import body
from .guards import session_id

bp = Blueprint("learn", __name__, url_prefix="/api/sessions")
_NUMBER = re.compile(r"[0-9]{1,4}")


@bp.get("/<sid>/learn")
def read_learning(sid: str) -> Response:
    """The conversation's newest learn run (or null).

    Progress is `windows_done` of `windows`. `409 not_imported` for a conversation that was not
    imported.
    """
    return jsonify(get_history_learning().status(session_id(sid)))


@bp.get("/<sid>/learn/estimate")
def estimate_learning(sid: str) -> Response:
    """Windows, tokens and cost of learning from the conversation; nothing runs."""
    sid = session_id(sid)
    raw = request.args.get("window_messages")
    if raw is not None and not _NUMBER.fullmatch(raw):
        raise invalid("window_messages", f"must be an integer from {MIN_WINDOW} to {MAX_WINDOW}")
    return jsonify(get_history_learning().estimate(sid, None if raw is None else int(raw)))


@bp.post("/<sid>/learn")
def start_learning(sid: str) -> tuple[Response, int]:
    """Learn from the imported conversation.

    Its active branch is read in windows through the regular cortex update and applied (or, in
    review mode, proposed) all at once when every window succeeded; the answer is 202 with the
    queued run. `409`: `not_imported`, `nothing_to_learn`, `cortex_disabled`,
    `learn_in_progress` (one learn run per persona at a time).
    """
    sid = session_id(sid)
    start = body(LearnStart, required=False)
    run = get_history_learning().start(sid, start.window_messages)
    response = jsonify(run)
    response.headers["Location"] = f"/api/sessions/{sid}/learn"
    return response, 202


@bp.post("/<sid>/learn/cancel")
def cancel_learning(sid: str) -> Response:
    """Cancel the queued or running learn run: nothing it read is applied.

    A queued run ends at once; a running one stops before its next window. `409
    learn_not_running` when nothing runs or the run is already being applied.
    """
    sid = session_id(sid)
    body(NoFields, required=False)
    return jsonify(get_history_learning().cancel(sid))
