"""The conversation tree over REST (§13): edit any message, switch the active branch."""
from flask import Blueprint, Response, jsonify

from ..utils.models.conversations import BranchChoice, MessageEdit
from ..utils.provider import get_chat_service, get_session_service
from .errors import body
from .guards import session_id

bp = Blueprint("branches", __name__, url_prefix="/api")


@bp.patch("/messages/<int:mid>")
def edit_message(mid: int) -> Response:
    """Edit any message as a new sibling (a new branch)."""
    edited = get_chat_service().edit_message(mid, body(MessageEdit).content)
    return jsonify({**get_session_service().get(edited.session_id), "message": edited.answer()})


@bp.put("/sessions/<sid>/active")
def switch_branch(sid: str) -> Response:
    """Make the branch through a message (its newest leaf) the active one."""
    sid = session_id(sid)
    leaf = get_chat_service().switch(sid, body(BranchChoice).message_id)
    return jsonify({**get_session_service().get(sid), "active_leaf_id": leaf})
