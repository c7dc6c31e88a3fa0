"""Conversation search and export: thin views over ConversationTools."""
from flask import Blueprint, Response, jsonify, request

from ..utils.provider import get_conversation_tools

bp = Blueprint("search", __name__)


@bp.get("/api/search")
def search() -> Response:
    """Search one persona's conversations."""
    return jsonify(get_conversation_tools().search(request.args.get("persona_id"),
                                                   request.args.get("q")).model_dump(mode="json"))


@bp.get("/api/sessions/<sid>/export")
def export_session(sid: str) -> Response:
    """Download the conversation as Markdown or JSON."""
    body, media_type, filename = get_conversation_tools().export(sid, request.args.get("format", "md"))
    response = Response(body, content_type=media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
