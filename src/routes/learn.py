"""Learning from an imported conversation over REST (issue 24): thin views over
HistoryLearning (docs/chat-import.md, "Learning from it")."""
import re

from flask import Blueprint, jsonify, request

from ..utils.models.conversations import NoFields
from ..utils.models.learn import MAX_WINDOW, MIN_WINDOW, LearnStart
from ..utils.provider import get_history_learning
from ..utils.services.errors import invalid
from .errors import body
from .guards import session_id

bp = Blueprint("learn", __name__, url_prefix="/api/sessions")
_NUMBER = re.compile(r"[0-9]{1,4}")


@bp.get("/<sid>/learn")
def read_learning(sid: str):
    """The conversation's newest learn run (progress: `windows_done` of `windows`), or null."""
    return jsonify(get_history_learning().status(session_id(sid)))


@bp.get("/<sid>/learn/estimate")
def estimate_learning(sid: str):
    """Windows, tokens and cost of learning from the conversation; nothing runs."""
    sid = session_id(sid)
    raw = request.args.get("window_messages")
    if raw is not None and not _NUMBER.fullmatch(raw):
        raise invalid("window_messages", f"must be an integer from {MIN_WINDOW} to {MAX_WINDOW}")
    return jsonify(get_history_learning().estimate(sid, None if raw is None else int(raw)))


@bp.post("/<sid>/learn")
def start_learning(sid: str):
    """Queues learning from the imported conversation: 202 with the run."""
    sid = session_id(sid)
    start = body(LearnStart, required=False)
    run = get_history_learning().start(sid, start.window_messages)
    response = jsonify(run)
    response.headers["Location"] = f"/api/sessions/{sid}/learn"
    return response, 202


@bp.post("/<sid>/learn/cancel")
def cancel_learning(sid: str):
    """Cancels the queued or running learn run; nothing it read is applied."""
    sid = session_id(sid)
    body(NoFields, required=False)
    return jsonify(get_history_learning().cancel(sid))
