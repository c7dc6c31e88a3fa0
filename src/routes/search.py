"""Conversation search and export: thin views over ConversationTools."""
from flask import Blueprint, Response, jsonify, request

from ..utils.provider import get_conversation_tools

bp = Blueprint("search", __name__)


@bp.get("/api/search")
def search():
    """`?persona_id=&q=`: the persona's messages containing the words, best first."""
    return jsonify(get_conversation_tools().search(request.args.get("persona_id"),
                                                   request.args.get("q")))


@bp.get("/api/sessions/<sid>/export")
def export_session(sid: str):
    """`?format=md|json`: the whole conversation as a download."""
    body, media_type, filename = get_conversation_tools().export(sid, request.args.get("format", "md"))
    response = Response(body, content_type=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
