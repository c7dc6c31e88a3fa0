"""Character cards, chat import, avatars and backups (DESIGN §12, §16)."""
from ..limits import CHAT_IMPORT
from .common import PERSONA_PARAM, errors, json_response, obj, operation, ref

_FILE_FORM = {"required": True, "content": {"multipart/form-data": {"schema": obj(
    {"file": {"type": "string", "format": "binary"}}, required=("file",))}}}
_FLAG = {"type": "string", "enum": ["0", "1"], "default": "0"}
_BINARY = {"type": "string", "format": "binary"}

SCHEMAS = {
    "CardPreview": obj({
        "format": {"type": "string", "enum": ["png", "json", "charx", "archive", "af"]},
        "spec_version": {"anyOf": [{"type": "integer", "enum": [1, 2, 3]}, {"type": "null"}],
                         "description": "The card's spec version; null for a persona archive or agent file."},
        "sessions": {"type": "integer", "description": "Archives: sessions it holds."},
        "messages": {"type": "integer", "description": "Archives: messages it holds."},
        "persona": {"type": "object", "description": "The fields the persona would get; "
                    "`avatar_url` is a data: URL of the re-encoded picture."},
        "includes_memories": {"type": "boolean"},
        "name_clash": {"type": "boolean", "description": "A persona with this name exists "
                       "(the import still creates a new one)."},
        "ignored": {"type": "array", "items": {"type": "string"},
                    "description": "What is kept but not used, or not kept."},
    }, required=("format", "spec_version", "persona", "includes_memories", "name_clash",
                 "ignored")),
    "ChatImportSummary": obj({
        "format": {"type": "string", "enum": ["sillytavern", "persona_cortex"]},
        "title": {"type": "string", "description": "The new conversation's title."},
        "messages": {"type": "integer", "description": "Messages on the active branch."},
        "stored": {"type": "integer", "description": "Messages stored, alternatives included."},
        "alternatives": {"type": "integer",
                         "description": "Messages off the active branch (unchosen swipes)."},
        "branch_points": {"type": "integer",
                          "description": "Messages with more than one alternative."},
        "first_date": {"type": "string"}, "last_date": {"type": "string"},
        "user_name": {"type": "string"}, "character_name": {"type": "string"},
        "names": {"type": "array", "items": {"type": "string"},
                  "description": "Speakers named in the file (at most 20)."},
        "skipped_system": {"type": "integer",
                           "description": "SillyTavern `is_system` messages left out."},
        "undated": {"type": "integer", "description": "Messages whose date could not be read "
                    "(they take the previous message's date)."},
    }, required=("format", "title", "messages", "stored", "alternatives", "first_date",
                 "last_date")),
}


def _file(description: str, *mimes: str) -> dict:
    return {"description": description, "content": {
        m: {"schema": {"type": "object"} if m == "application/json" else _BINARY}
        for m in mimes}}


def paths() -> dict:
    """The import, export, avatar and backup paths."""
    persona = json_response("The persona.", ref("Persona"))
    return {
        "/api/personas/import": {"post": operation(
            "importCard", "personas",
            "Create a persona from a Character Card (V1/V2/V3 as PNG, JSON or CHARX), a "
            "persona archive or a Letta-style agent file (.af).",
            {"201": json_response("The new persona.", ref("Persona")),
             "200": json_response("With `preview=1`: what would be created; nothing is stored.",
                                  ref("CardPreview")),
             **errors("400", "413", "415", "503")}, write=True,
            parameters=[{"name": "preview", "in": "query", "required": False, "schema": _FLAG}],
            requestBody=_FILE_FORM,
            description="Refusals are `400 invalid_card` or `413 too_large` with a `reason`."
                        " A name clash creates a new persona. `503 server_busy` (with "
                        "`Retry-After`) when the worker's queue of CPU-heavy steps is full.")},
        "/api/personas/{pid}/chats/import": {"parameters": [PERSONA_PARAM], "post": operation(
            "importChat", "sessions",
            "Make a chat file (SillyTavern `.jsonl`, or a conversation exported as JSON) a new "
            "conversation of the persona: swipes become branches, dates are kept.",
            {"201": json_response("The new session, with the import's counts under `summary`.",
                                  {"allOf": [ref("Session"), obj(
                                      {"summary": ref("ChatImportSummary")})]}),
             "200": json_response("With `preview=1`: what the file holds; nothing is stored.",
                                  ref("ChatImportSummary")),
             **errors("400", "404", "413", "415")}, write=True,
            parameters=[{"name": "preview", "in": "query", "required": False, "schema": _FLAG}],
            requestBody=_FILE_FORM,
            description="Refusals are `400 invalid_chat` or `413 too_large` with a `reason`; "
                        f"limits: {CHAT_IMPORT['messages']} messages (swipes included), "
                        f"{CHAT_IMPORT['message_chars']} characters per message, "
                        f"{CHAT_IMPORT['swipes']} swipes per message, "
                        f"{CHAT_IMPORT['line_bytes']} bytes per line. Imported messages do not "
                        "trigger a cortex update.")},
        "/api/personas/{pid}/export": {"parameters": [PERSONA_PARAM], "get": operation(
            "exportCard", "personas", "The persona as a card file (attachment).",
            {"200": _file("The card.", "image/png", "application/json", "application/zip"),
             **errors("400", "404", "503")},
            parameters=[{"name": "format", "in": "query", "required": False, "schema": {
                "type": "string", "enum": ["png", "json", "charx", "archive"], "default": "png"},
                "description": "`archive`: the persona with its sessions, messages and cortex "
                               "history (needs `include_memories=1`)."},
                {"name": "include_memories", "in": "query", "required": False,
                 "schema": _FLAG}])},
        "/api/personas/{pid}/export/af": {"parameters": [PERSONA_PARAM], "get": operation(
            "exportAgentFile", "personas",
            "The cortex as Letta-style memory blocks in an `.af`-shaped JSON (attachment).",
            {"200": json_response("The agent file.", {"type": "object"}),
             **errors("404")})},
        "/api/personas/{pid}/avatar": {
            "parameters": [PERSONA_PARAM],
            "get": operation("getAvatar", "personas", "The persona's avatar.",
                             {"200": _file("The picture.", "image/png", "image/jpeg",
                                           "image/webp"), **errors("404")}),
            "put": operation("putAvatar", "personas",
                             "Set the avatar (PNG, JPEG or WebP; re-encoded, metadata dropped).",
                             {"200": persona, **errors("400", "404", "413", "415", "503")},
                             write=True, requestBody=_FILE_FORM),
            "delete": operation("deleteAvatar", "personas", "Remove the avatar.",
                                {"200": persona, **errors("400", "404")}, write=True),
        },
        "/api/backup": {"get": operation(
            "downloadBackup", "settings",
            "A backup of all data (zip: SQLite snapshot, cortex files, manifest with checksums;"
            " never the API key).", {"200": _file("The backup.", "application/zip"),
                                     **errors("503")})},
    }
