"""The chat request: system prompt, the branch being answered, and the model settings."""
import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ..api_request.types import RequestConfig
from ..cortex import CortexService
from ..cortex.settings import load_cortex_settings
from ..models.sessions import SessionRow
from ..storage import (
    Database,
    messages as message_store,
    personas as persona_store,
    user_personas as user_persona_store,
)
from . import greetings, prompt_builder as prompts, world_info
from .settings_service import SettingsService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptSources:
    """What a reply's prompt held: the cortex revision of each file (None: cortex off) and the
    world info entries that fired. Written with the stored reply, in its final transaction
    (one write per turn at the end, not one more at the start)."""

    reply_id: int
    revisions: dict | None
    fired: list[dict]

    def save(self, conn: sqlite3.Connection) -> None:
        """Records them on the reply's row, in the caller's transaction."""
        message_store.set_prompt_sources(conn, self.reply_id, self.revisions, self.fired)


class ChatPrompt:
    """Builds the `RequestConfig` for a reply from the branch that ends at it."""

    def __init__(self, db: Database, cortex_service: CortexService, settings: SettingsService,
                 clock: Callable[[], datetime] | None):
        self._db = db
        self._cortex = cortex_service
        self._settings = settings
        self._clock = clock or (lambda: datetime.now().astimezone())

    def config(self, session: SessionRow, reply_id: int, prefix: str, parent_id: int | None = None
               ) -> tuple[RequestConfig, PromptSources]:
        """The request for reply `reply_id`: the path to its parent (`parent_id` when the
        caller knows it), plus `prefix` (the text a continued reply already has) as the final
        assistant turn the model continues; and what it drew on, for the caller to store with
        the reply."""
        conn = self._db.conn()
        stored = persona_store.get_persona(conn, session.persona_id)
        assert stored is not None  # a session's persona exists (deleting it deletes the session)
        # the session's greeting stands in the prompt's greeting section; an import opens with
        # its own message (a shallow copy: the stored persona is not changed)
        persona = stored.model_copy(update={"greeting": "" if session.imported else
                                            greetings.greeting_for(stored, session.greeting_index)})
        app = self._settings.values()
        language = prompts.language_of(persona.language, app.language)
        user_persona = user_persona_store.chosen_or_default(conn, session.user_persona_id)
        user_name, about = prompts.user_for(persona, app.user_name, language, user_persona)
        cortex, used = self._cortex_text(persona.id)
        card_user = prompts.card_user_for(persona, app.user_name, user_persona)
        if parent_id is None:
            reply = message_store.get_message(conn, reply_id)
            assert reply is not None  # created before its request is built
            parent_id = reply["parent_id"]
        history = message_store.history_for_prompt(conn, session.id,
                                                   max(app.context_limit, 1), parent_id)
        fired = world_info.fire(conn, persona, user_name, history)
        sources = PromptSources(reply_id, used, [hit.record() for hit in fired])
        system = prompts.system_blocks(persona, user_name, cortex, language, self._clock(),
                                       [hit.content for hit in fired], about, card_user)
        history = prompts.with_post_history(
            history, prompts.post_history_instructions(persona, card_user))
        if prefix.strip() and history:
            history.append({"role": "assistant", "content": prefix})
        return RequestConfig(system_prompt=system, messages=history,
                             model=persona.model or app.model,
                             max_tokens=app.max_tokens, effort=app.effort,
                             stream=True, request_type="chat"), sources

    def _cortex_text(self, persona_id: str) -> tuple[dict | None, dict | None]:
        """The cortex files for the prompt and the revision of each (`{"memory.md": 12}`, the
        reply's provenance); None, None when the cortex is disabled or unreadable."""
        if not load_cortex_settings(self._db.conn())["enabled"]:
            return None, None
        try:
            texts = self._cortex.prompt_texts(persona_id)
        except Exception:
            log.exception("Could not read the cortex of persona %s; answering without it",
                          persona_id)
            return None, None
        return ({f"cortex_{name[:-3]}": content.strip() for name, content, _ in texts},
                {name: revision for name, _, revision in texts})


def error_of(message: dict) -> dict | None:
    """A stored reply's failure `{code, message, retryable}`, or None."""
    raw = message.get("error")
    if not raw:
        return None
    try:
        error = json.loads(raw)
    except ValueError:
        return {"code": "api_error", "message": "The reply failed.", "retryable": True}
    return error if isinstance(error, dict) else None


def _revisions(raw: str | None) -> dict | None:
    """An assistant message's `cortex_revisions` ({file: rev}), or None (cortex off, or a
    reply older than provenance)."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _world_info(raw: str | None) -> list | None:
    """An assistant message's fired world info entries (list), or None (none fired)."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def public(message: dict, siblings: dict | None = None) -> dict:
    """A message as the API shows it: `status` "streaming" (and no `stop_reason`) while
    generated, `error` as an object, `edited` as a boolean, and the ids of its alternatives
    (`siblings`)."""
    shown = {key: message[key] for key in ("id", "session_id", "persona_id", "role", "content",
                                           "created_at", "parent_id", "stop_reason")}
    if message.get("streaming"):  # a mark between processes (generations.py), not an end yet
        shown["stop_reason"] = None
    shown["status"] = "streaming" if message.get("streaming") else message["status"]
    shown["edited"] = bool(message.get("edited"))
    shown["error"] = error_of(message)
    if message["role"] == "assistant":
        shown["cortex_revisions"] = _revisions(message.get("cortex_revisions"))
        shown["world_info"] = _world_info(message.get("world_info"))
    if siblings is not None:
        shown["siblings"] = siblings.get(message["parent_id"], [message["id"]])
    return shown

