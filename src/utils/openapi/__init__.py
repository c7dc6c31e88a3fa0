"""The Open API 3.1 document of the JSON API, assembled from one module per area.

It is plain data (no Flask): `routes/openapi.py` serves it, and tests check it against
`app.url_map` in both directions and validate real responses against it.
"""
import copy
from functools import lru_cache

from ..models.errors import Error
from . import (
    access,
    chat,
    common,
    conversations,
    cortex,
    cortex_review,
    inspector,
    learn,
    portability,
    search,
    settings,
    user_personas,
    world,
)
from .table import model_ref, model_schemas

_AREAS = (conversations, chat, cortex, cortex_review, settings, access, portability, search, world,
          user_personas, inspector, learn)
_DESCRIPTION = (
    "The JSON API of Persona Cortex. Every error is `{\"error\": {\"code\", \"message\", ...}}` "
    "with a 4xx/5xx status, never HTML. Requests that change state accept only JSON bodies. "
    "Chat replies stream as Server-Sent Events (`POST /api/chat/stream`) or over the WebSocket "
    "`/ws/chat` (frames in `x-websocket`). When the app is bound beyond loopback, every request "
    "needs the access token (`PERSONA_ACCESS_TOKEN`), see docs/security.md.")
TAGS = [
    {"name": "chat", "description": "Streaming replies (SSE and WebSocket)."},
    {"name": "personas", "description": "The characters."},
    {"name": "sessions", "description": "Conversations, one persona each."},
    {"name": "messages", "description": "Editing the end of a conversation."},
    {"name": "cortex", "description": "Each persona's memory files, history and updates."},
    {"name": "settings", "description": "Model, language, the API key."},
    {"name": "access", "description": "Signing in with the access token (LAN use)."},
    {"name": "meta", "description": "Health and this document."},
]


@lru_cache(maxsize=1)
def _document() -> dict:
    paths: dict = {}
    for area in _AREAS:
        paths.update(area.paths())
    model_ref(Error)
    schemas = model_schemas()
    return {
        "openapi": "3.1.0",
        "info": {"title": "Persona Cortex API", "version": "1.0.0", "description": _DESCRIPTION},
        "servers": [{"url": "/"}],
        "tags": TAGS,
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items())),
                       "responses": common.RESPONSES},
    }


def build_document() -> dict:
    """The document (a fresh copy: callers may change it freely)."""
    return copy.deepcopy(_document())
