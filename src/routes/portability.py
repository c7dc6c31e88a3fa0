"""Character cards, avatars and backups over REST (DESIGN §12): thin views over CardService."""
import io
from datetime import UTC, datetime
from typing import IO

from flask import Blueprint, Request, Response, jsonify, request

from ..utils.portability.errors import MAX_UPLOAD, invalid_card, invalid_chat, too_large
from ..utils.provider import get_backup_service, get_card_service, get_chat_import_service
from .errors import ApiError
from .guards import no_body_or_json, persona_id


class MemoryUploadRequest(Request):
    """Keeps uploaded files in memory (the body limit bounds them) instead of spooling those
    over 500 KB to a temporary file: file writes are blocking calls that gevent cannot make
    cooperative, and on a busy disk they froze the worker's loop for half a second per upload."""

    def _get_file_stream(self, total_content_length: int | None, content_type: str | None,
                         filename: str | None = None,
                         content_length: int | None = None) -> IO[bytes]:
        return io.BytesIO()


bp = Blueprint("portability", __name__, url_prefix="/api")
UPLOAD_ENDPOINTS = frozenset({"portability.import_card", "portability.put_avatar",
                              "portability.import_chat",
                              "user_personas.put_avatar"})
_FILE_HEADERS = {"X-Content-Type-Options": "nosniff",
                 "Content-Security-Policy": "default-src 'none'; sandbox"}


@bp.post("/personas/import")
def import_card() -> Response | tuple[Response, int]:
    """Create a persona from a Character Card (V1/V2/V3 as PNG, JSON or CHARX), a persona archive or
    a Letta-style agent file (.af).

    Refusals are `400 invalid_card` or `413 too_large` with a `reason`. A name clash creates a new
    persona. `503 server_busy` (with `Retry-After`) when the worker's queue of CPU-heavy steps is
    full.
    """
    data = uploaded_file()
    if _flag("preview"):
        return jsonify(get_card_service().preview(data))
    return jsonify(get_card_service().import_card(data).model_dump(mode="json")), 201


@bp.post("/personas/<pid>/chats/import")
def import_chat(pid: str) -> Response | tuple[Response, int]:
    """Make a chat file (SillyTavern `.jsonl`, or a conversation exported as JSON) a new
    conversation of the persona: swipes become branches, dates are kept."""
    pid = persona_id(pid)
    data = uploaded_file(kind="chat")
    if _flag("preview"):
        return jsonify(get_chat_import_service().preview(pid, data))
    return jsonify(get_chat_import_service().import_chat(pid, data)), 201


@bp.get("/personas/<pid>/export")
def export_card(pid: str) -> Response:
    """The persona as a card file (attachment)."""
    pid = persona_id(pid)
    fmt = request.args.get("format", "png")
    body, mime, filename = get_card_service().export(pid, fmt, _flag("include_memories"))
    return _attachment(body, mime, filename)


@bp.get("/personas/<pid>/export/af")
def export_agent_file(pid: str) -> Response:
    """The cortex as Letta-style memory blocks in an `.af`-shaped JSON (attachment)."""
    body, filename = get_card_service().agent_file(persona_id(pid))
    return _attachment(body, "application/json", filename)


@bp.get("/personas/<pid>/avatar")
def get_avatar(pid: str) -> Response:
    """The persona's avatar."""
    return avatar_response(get_card_service().avatar(persona_id(pid)))


def avatar_response(avatar: dict) -> Response:
    """A stored avatar as an inline image, cached for good when the URL names its hash (`?v=`,
    the first 12 hex digits), else revalidated; sandboxed like every file we serve."""
    response = Response(avatar["data"], mimetype=avatar["mime"], headers=_FILE_HEADERS)
    response.headers["Cache-Control"] = "private, max-age=31536000, immutable" \
        if request.args.get("v") == avatar["sha256"][:12] else "private, no-cache"
    response.headers["Content-Disposition"] = "inline"
    return response


@bp.put("/personas/<pid>/avatar")
def put_avatar(pid: str) -> Response:
    """Set the avatar (PNG, JPEG or WebP; re-encoded, metadata dropped)."""
    pid = persona_id(pid)
    persona = get_card_service().set_avatar(pid, uploaded_file(kind="picture"))
    return jsonify(persona.model_dump(mode="json"))


@bp.delete("/personas/<pid>/avatar")
def delete_avatar(pid: str) -> Response:
    """Remove the avatar."""
    pid = persona_id(pid)
    no_body_or_json()
    return jsonify(get_card_service().delete_avatar(pid).model_dump(mode="json"))


@bp.get("/backup")
def download_backup() -> Response:
    """A backup of all data (zip: SQLite snapshot, cortex files, manifest with checksums; never the
    API key)."""
    body = get_backup_service().to_bytes()
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return _attachment(body, "application/zip", f"persona-cortex-backup-{stamp}.zip")


def uploaded_file(kind: str = "card") -> bytes:
    """The multipart field `file`, read up to the upload limit."""
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type",
                       "Send the file as multipart/form-data in the field `file`.")
    upload = request.files.get("file")
    if upload is None:
        refusal = invalid_chat if kind == "chat" else invalid_card
        raise refusal("no_file", f"Attach the {kind} in the form field `file`.")
    data = upload.stream.read(MAX_UPLOAD + 1)
    if len(data) > MAX_UPLOAD:
        raise too_large("file_too_large", f"The file is larger than {MAX_UPLOAD} bytes.")
    return data


def _flag(name: str) -> bool:
    value = request.args.get(name, "0")
    if value not in ("0", "1", "true", "false"):
        raise ApiError(400, "validation_error", f"{name}: must be 0 or 1", field=name)
    return value in ("1", "true")


def _attachment(body: bytes, mime: str, filename: str) -> Response:
    response = Response(body, mimetype=mime, headers=_FILE_HEADERS)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["Cache-Control"] = "no-store"
    return response
