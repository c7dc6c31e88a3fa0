"""Character cards, chat import, avatars and backups (DESIGN §12, §16)."""
from ..limits import CHAT_IMPORT
from ..models import personas, portability as p
from .common import FILE_FORM, PICTURE
from .table import Op, json_response, model_ref

_FLAG = {"type": "string", "enum": ["0", "1"], "default": "0"}
_PREVIEW = ({"name": "preview", "in": "query", "required": False, "schema": _FLAG},)


def _file(description: str, *mimes: str) -> dict:
    return {"description": description, "content": {
        m: {"schema": {"type": "object"} if m == "application/json" else
            {"type": "string", "format": "binary"}} for m in mimes}}


def _preview(model: type[p.CardPreview] | type[p.ChatImportSummary]) -> dict:
    return {"200": json_response("With `preview=1`: nothing is stored.", model_ref(model))}


_EXPORT = ({"name": "format", "in": "query", "required": False, "schema": {
    "type": "string", "enum": ["png", "json", "charx", "archive"], "default": "png"},
    "description": "`archive`: the persona with its sessions, messages and cortex history "
                   "(needs `include_memories=1`)."},
    {"name": "include_memories", "in": "query", "required": False, "schema": _FLAG})
_AVATAR = "/api/personas/{pid}/avatar"
ROUTES = {"personas": (
    Op("post", "/api/personas/import", "Create a persona from a Character Card (V1/V2/V3 as "
       "PNG, JSON or CHARX), a persona archive or a Letta-style agent file (.af).",
       personas.Persona, FILE_FORM, "400 413 415 503", "201", params=_PREVIEW,
       more=_preview(p.CardPreview), description="Refusals are `400 invalid_card` or `413 "
       "too_large` with a `reason`. A name clash creates a new persona. `503 server_busy` (with "
       "`Retry-After`) when the worker's queue of CPU-heavy steps is full."),
    Op("get", "/api/personas/{pid}/export", "The persona as a card file (attachment).",
       _file("The card.", "image/png", "application/json", "application/zip"),
       errors="400 404 503", params=_EXPORT),
    Op("get", "/api/personas/{pid}/export/af", "The cortex as Letta-style memory blocks in an "
       "`.af`-shaped JSON (attachment).", "The agent file.", errors="404"),
    Op("get", _AVATAR, "The persona's avatar.", PICTURE, errors="404"),
    Op("put", _AVATAR, "Set the avatar (PNG, JPEG or WebP; re-encoded, metadata dropped).",
       personas.Persona, FILE_FORM, "400 404 413 415 503"),
    Op("delete", _AVATAR, "Remove the avatar.", personas.Persona, errors="400 404"),
), "sessions": (
    Op("post", "/api/personas/{pid}/chats/import", "Make a chat file (SillyTavern `.jsonl`, or "
       "a conversation exported as JSON) a new conversation of the persona: swipes become "
       "branches, dates are kept.", p.ImportedChat, FILE_FORM, "400 404 413 415", "201",
       params=_PREVIEW, more=_preview(p.ChatImportSummary),
       description="Refusals are `400 invalid_chat` or `413 too_large` with a `reason`; "
                   f"limits: {CHAT_IMPORT['messages']} messages (swipes included), "
                   f"{CHAT_IMPORT['message_chars']} characters per message, "
                   f"{CHAT_IMPORT['swipes']} swipes per message, {CHAT_IMPORT['line_bytes']} "
                   "bytes per line. Imported messages do not trigger a cortex update."),
), "settings": (
    Op("get", "/api/backup", "A backup of all data (zip: SQLite snapshot, cortex files, "
       "manifest with checksums; never the API key).", _file("The backup.", "application/zip"),
       errors="503"),
)}
