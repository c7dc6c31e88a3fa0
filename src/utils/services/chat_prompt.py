"""The chat request: system prompt, the branch being answered, and the model settings."""
import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple, TypeVar

from ..api_request.types import RequestConfig
from ..cortex import CortexService
from ..models.personas import Persona
from ..models.sessions import SessionRow
from ..models.user_personas import UserPersona
from ..storage import (
    Database,
    generations,
    messages as message_store,
    personas as persona_store,
    user_personas as user_persona_store,
)
from . import greetings, prompt_builder as prompts, world_info
from .settings_service import SettingsService

log = logging.getLogger(__name__)
T = TypeVar("T")


class PromptSources(NamedTuple):
    """What a reply's prompt held: the cortex revision of each file (None: cortex off) and the
    world info entries that fired. Stored with the reply's final text, in the same update
    (`messages.finish_reply`'s `sources`): no write of its own at the start or the end."""

    revisions: dict | None
    fired: list[dict]


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
        the reply. The request goes to the endpoint of the settings it was built from, with
        the key that belongs there as it is now (`SettingsService.connection`)."""
        conn = self._db.conn()
        counters = generations.read(conn)  # first: what is kept under it is read after it
        greeting = None if session.imported else session.greeting_index
        persona = self._kept(counters.config, "persona", (session.persona_id, greeting),
                             lambda: self._opening(conn, session.persona_id, greeting))
        settings = self._settings.turn(counters.config)
        app = settings.app
        language = prompts.language_of(persona.language, app.language)
        user_persona = self._user_persona(conn, counters.config, session.user_persona_id,
                                          settings.default_user)
        user_name, about = prompts.user_for(persona, app.user_name, language, user_persona)
        cortex, used = self._cortex_text(persona.id, settings.cortex.enabled, counters.cortex)
        card_user = prompts.card_user_for(persona, app.user_name, user_persona)
        if parent_id is None:
            reply = message_store.get_message(conn, reply_id)
            assert reply is not None  # created before its request is built
            parent_id = reply.parent_id
        history = message_store.history_for_prompt(conn, session.id,
                                                   max(app.context_limit, 1), parent_id)
        books = self._kept(counters.config, "world_books", persona.id,
                           lambda: world_info.books_for(conn, persona.id))
        fired = world_info.fire(books, persona, card_user, history)
        sources = PromptSources(used, [hit.record() for hit in fired])
        system = prompts.system_blocks(persona, user_name, cortex, language, self._clock(),
                                       [hit.content for hit in fired], about, card_user)
        turns = prompts.with_post_history(
            history, prompts.post_history_instructions(persona, card_user))
        if prefix.strip() and turns:
            turns.append({"role": "assistant", "content": prefix})
        return RequestConfig(system_prompt=system, messages=turns,
                             model=persona.model or app.model,
                             max_tokens=app.max_tokens, effort=app.effort,
                             stream=True, request_type="chat",
                             connection=self._settings.connection(app)), sources

    @staticmethod
    def _opening(conn: sqlite3.Connection, persona_id: str, greeting: int | None) -> Persona:
        """The persona as a session's prompt shows it: its greeting section holds the greeting
        `greeting` the session opened with (None: an import, which opens with its own message,
        has none); a shallow copy, the stored persona is not changed."""
        stored = persona_store.get_persona(conn, persona_id)
        assert stored is not None  # a session's persona exists (deleting it deletes the session)
        return stored.model_copy(update={"greeting": "" if greeting is None else
                                         greetings.greeting_for(stored, greeting)})

    def _kept(self, generation: int, kind: str, key: object, load: Callable[[], T]) -> T:
        """A configuration row of the turn, as the process keeps it while the `config` counter
        stands at `generation` (`storage/generations.py`): shared, never changed here."""
        return self._settings.cache.get(generation, (kind, key), load)

    def _user_persona(self, conn: sqlite3.Connection, generation: int, chosen: int | None,
                      default: UserPersona | None) -> UserPersona | None:
        """The session's own user persona (`chosen`), else the default (`default`, read with
        the settings), as kept under the `config` counter `generation`."""
        if chosen is None:
            return default
        return self._kept(generation, "user_persona", chosen,
                          lambda: user_persona_store.chosen_or(conn, chosen, default))

    def _cortex_text(self, persona_id: str, enabled: bool,
                     generation: int) -> tuple[dict | None, dict | None]:
        """The cortex files for the prompt and the revision of each (`{"memory.md": 12}`, the
        reply's provenance); None, None when the cortex is disabled or unreadable. `generation`:
        the `cortex` counter read at the turn's start."""
        if not enabled:
            return None, None
        try:
            texts = self._cortex.prompt_texts(persona_id, generation)
        except Exception:
            log.exception("Could not read the cortex of persona %s; answering without it",
                          persona_id)
            return None, None
        return ({f"cortex_{name[:-3]}": content.strip() for name, content, _ in texts},
                {name: revision for name, _, revision in texts})

