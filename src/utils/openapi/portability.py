"""Character cards, chat import, avatars and backups (DESIGN §12, §16)."""
from ...routes import portability
from ..limits import CHAT_IMPORT
from ..models import personas, portability as p
from .common import FILE_FORM, PICTURE
from .table import Op, binary, json_response, model_ref, query

_FLAG = {"type": "string", "enum": ["0", "1"], "default": "0"}
_PREVIEW = (query("preview", _FLAG),)

_PREVIEWED = {model: {"200": json_response("With `preview=1`: nothing is stored.", model_ref(
    model))} for model in (p.CardPreview, p.ChatImportSummary)}

_EXPORT = (query("format", {"type": "string", "enum": ["png", "json", "charx", "archive"],
                            "default": "png"}, "`archive`: the persona with its sessions, "
                  "messages and cortex history (needs `include_memories=1`)."),
           query("include_memories", _FLAG))
ROUTES = {"personas": (
    Op(portability.import_card, personas.Persona, FILE_FORM, "400 413 415 503", "201",
       params=_PREVIEW, more=_PREVIEWED[p.CardPreview]),
    Op(portability.export_card,
       binary("The card.", "image/png", "application/json", "application/zip"),
       errors="400 404 503", params=_EXPORT),
    Op(portability.export_agent_file, "The agent file.", errors="404"),
    Op(portability.get_avatar, PICTURE, errors="404"),
    Op(portability.put_avatar, personas.Persona, FILE_FORM, "400 404 413 415 503"),
    Op(portability.delete_avatar, personas.Persona, errors="400 404"),
), "sessions": (
    Op(portability.import_chat, p.ImportedChat, FILE_FORM, "400 404 413 415 503", "201",
       params=_PREVIEW, more=_PREVIEWED[p.ChatImportSummary],
       description="Refusals are `400 invalid_chat` or `413 too_large` with a `reason`; "
                   f"limits: {CHAT_IMPORT['messages']} messages (swipes included), "
                   f"{CHAT_IMPORT['message_chars']} characters per message, "
                   f"{CHAT_IMPORT['swipes']} swipes per message, {CHAT_IMPORT['line_bytes']} "
                   "bytes per line. Imported messages do not trigger a cortex update."),
), "settings": (
    Op(portability.download_backup, binary("The backup.", "application/zip"), errors="503"),
)}
