"""One chat turn as a stream of events, shared by the WebSocket and SSE transports (DESIGN §6).

The user message is stored before the upstream call, so it is never lost; the reply is stored when
the stream ends: complete, or marked `incomplete` when it was stopped or failed after some text (a
reply with no text is not stored). The generators never raise: anything unexpected becomes an
`error` event. One reply at a time per session (across worker processes); a second one gets `session_busy`.
"""
import logging
import threading
from contextlib import contextmanager
from datetime import datetime
from typing import Callable, Iterator

from ..api_request.types import RequestConfig
from ..cortex.settings import load_cortex_settings
from ..limits import MESSAGE
from ..storage import exchanges
from ..storage import messages as message_store
from ..storage import personas as persona_store
from ..storage import sessions as session_store
from ..text import scrub
from . import chat_events as events
from . import greetings
from . import prompt_builder as prompts
from .chat_events import ChatEvent
from .errors import ServiceError, invalid, not_found
from .ids import is_session_id
from .validation import encodable

log = logging.getLogger(__name__)
MESSAGE_MAX = MESSAGE
NO_CORTEX = {"triggered": False, "job_id": None, "progress": None, "frequency": None}


class ChatService:
    """Runs chat turns: builds the prompt, streams the reply, stores both sides, triggers the cortex."""

    def __init__(self, db, api_client, cortex_service, settings, leases, *,
                 trigger: Callable[[str, str], dict] | None = None, titles=None,
                 clock: Callable[[], datetime] | None = None):
        self._db = db
        self._api = api_client
        self._cortex = cortex_service
        self._settings = settings
        self._trigger = trigger
        self.titles = titles
        self._clock = clock or (lambda: datetime.now().astimezone())
        self._leases = leases

    def session(self, session_id) -> dict:
        """The session row; ServiceError 404 when unknown."""
        found = None
        if isinstance(session_id, str) and is_session_id(session_id):
            found = session_store.get_session(self._db.conn(), session_id)
        if found is None:
            raise not_found("session", str(session_id))
        return found

    def check_turn(self, session_id, message) -> dict:
        """Validates a new turn before any reply starts; returns the session or raises ServiceError."""
        session = self._validate_turn(session_id, message)
        self._check_idle(session_id)
        return session

    def check_regenerate(self, session_id) -> dict:
        """Validates a regenerate request: the session exists, is idle and has a user message."""
        session = self._validate_regenerate(session_id)
        self._check_idle(session_id)
        return session

    def run_turn(self, session_id, message, cancel: threading.Event | None = None
                 ) -> Iterator[ChatEvent]:
        """Stores `message`, then streams the reply: start, chunk…, then done or error."""
        def prepare():
            session = self._validate_turn(session_id, message)
            return session, message_store.add_message(self._db.conn(), session_id, "user",
                                                      message)
        return self._run(session_id, prepare, cancel)

    def regenerate(self, session_id, cancel: threading.Event | None = None
                   ) -> Iterator[ChatEvent]:
        """Replaces the last reply (or answers a last user message that has none) as a stream."""
        def prepare():
            session = self._validate_regenerate(session_id)
            with self._db.transaction():
                user = self._last_user_message(session_id)
                self._delete_from(session_id, user["id"] + 1)
            return session, user
        return self._run(session_id, prepare, cancel)

    def edit_last(self, session_id, content) -> dict:
        """Replaces the last user message (its reply is removed); the client then regenerates.

        The edited text is stored as a new message, so the cortex counts it as not yet processed.
        """
        self.session(session_id)
        _check_text("content", content)
        with self._exclusive(session_id), self._db.transaction():
            user = self._last_user_message(session_id)
            if user is None:
                raise ServiceError(409, "nothing_to_edit", "This session has no message to edit.")
            self._delete_from(session_id, user["id"])
            return message_store.add_message(self._db.conn(), session_id, "user", content)

    def delete_last(self, session_id) -> list[int]:
        """Deletes the last exchange (the last user message and all after it); returns the ids."""
        self.session(session_id)
        with self._exclusive(session_id), self._db.transaction():
            user = self._last_user_message(session_id)
            last = exchanges.last_message(self._db.conn(), session_id)
            if last is None:
                raise ServiceError(409, "nothing_to_delete", "This session has no messages.")
            return self._delete_from(session_id, (user or last)["id"])

    def _run(self, session_id, prepare, cancel) -> Iterator[ChatEvent]:
        """start, chunk…, then the final event, yielded only after the session is free again,
        so a client may send its next request the moment it sees `done` or `error`. Without a
        `cancel` event, closing the generator is what cancels the upstream request."""
        if not self._claim(session_id):
            yield _error_event(_busy())
            return
        try:
            session, user = prepare()
            yield events.start(session_id, user["id"])
            final = yield from self._reply(session, user, cancel)
        except ServiceError as err:
            final = _error_event(err)
        except Exception:
            log.exception("Chat turn failed in session %s", session_id)
            final = events.error("internal_error", "Something went wrong on the server while "
                                 "answering (see the server log).", True)
        finally:
            self._release(session_id)
        yield final

    def _reply(self, session: dict, user: dict, cancel: threading.Event | None):
        """Yields the chunks; returns the final `done` or `error` event."""
        config = self._request_config(session)
        parts: list[str] = []
        finished: dict = {}
        upstream = self._api.stream(config, cancel)
        try:
            for event in upstream:
                if event.event_type == "chunk" and event.data:
                    parts.append(event.data)
                    yield events.chunk(event.data)
                elif event.event_type in ("done", "error"):
                    finished = {"type": event.event_type, **(event.data or {})}
        finally:
            _close(upstream)
            text = "".join(parts)
            complete = finished.get("type") == "done" and finished.get("stop_reason") != "cancelled"
            stored = self._store_reply(session["id"], text, complete)
        if finished.get("type") == "error":
            return events.error(finished.get("code") or "api_error",
                                finished.get("message") or "The reply failed.",
                                bool(finished.get("retryable")))
        if complete and stored:
            self._maybe_title(session, user, stored)
        return events.done(stored["id"] if stored else None, text, finished.get("usage"),
                           finished.get("stop_reason") or "cancelled", self._check_cortex(session))

    def _request_config(self, session: dict) -> RequestConfig:
        conn = self._db.conn()
        persona = persona_store.get_persona(conn, session["persona_id"])
        persona["greeting"] = greetings.greeting_for(persona, session.get("greeting_index") or 0)
        app = self._settings.values()
        language = prompts.language_of(persona.get("language"), app.get("language"))
        user_name = prompts.user_name_for(persona, app, language)
        system = prompts.system_blocks(persona, user_name, self._cortex_text(persona["id"]),
                                       language, self._clock())
        history = message_store.history_for_prompt(conn, session["id"],
                                                   max(int(app["context_limit"]), 1))
        history = prompts.with_post_history(
            history, prompts.post_history_instructions(persona, user_name))
        return RequestConfig(system_prompt=system, messages=history, model=app.get("model"),
                             max_tokens=int(app["max_tokens"]), effort=app.get("effort"),
                             stream=True, request_type="chat")

    def _cortex_text(self, persona_id: str) -> dict | None:
        """The cortex files for the prompt; None when the cortex is disabled or unreadable."""
        if not load_cortex_settings(self._db.conn())["enabled"]:
            return None
        try:
            return self._cortex.get_cortex_for_prompt(persona_id)
        except Exception:
            log.exception("Could not read the cortex of persona %s; answering without it",
                          persona_id)
            return None

    def _store_reply(self, session_id: str, text: str, complete: bool) -> dict | None:
        if not text:
            return None
        status = "complete" if complete else "incomplete"
        try:
            return message_store.add_message(self._db.conn(), session_id, "assistant",
                                             scrub(text), status)
        except LookupError:
            log.warning("Session %s was deleted while its reply streamed", session_id)
            return None

    def _check_cortex(self, session: dict) -> dict:
        if self._trigger is None:
            return dict(NO_CORTEX)
        try:
            return self._trigger(session["persona_id"], session["id"]) or dict(NO_CORTEX)
        except Exception:
            log.exception("Cortex trigger check failed for persona %s", session["persona_id"])
            return dict(NO_CORTEX)

    def _maybe_title(self, session: dict, user: dict, reply: dict) -> None:
        if self.titles is not None and not session.get("title"):
            self.titles.schedule(session["id"], user["content"], reply["content"])

    def _validate_turn(self, session_id, message) -> dict:
        session = self.session(session_id)
        _check_text("message", message)
        return session

    def _validate_regenerate(self, session_id) -> dict:
        session = self.session(session_id)
        if self._last_user_message(session_id) is None:
            raise ServiceError(409, "nothing_to_regenerate",
                               "This session has no message to answer.")
        return session

    def _last_user_message(self, session_id: str) -> dict | None:
        return exchanges.last_message(self._db.conn(), session_id, "user")

    def _delete_from(self, session_id: str, first_id: int) -> list[int]:
        doomed = exchanges.ids_from(self._db.conn(), session_id, first_id)
        for message_id in doomed:
            message_store.delete_message(self._db.conn(), message_id)
        return doomed

    @contextmanager
    def _exclusive(self, session_id: str):
        if not self._claim(session_id):
            raise _busy()
        try:
            yield
        finally:
            self._release(session_id)

    def _check_idle(self, session_id: str) -> None:
        if self._leases.is_busy(session_id):
            raise _busy()

    def _claim(self, session_id: str) -> bool:
        return self._leases.claim(session_id)

    def _release(self, session_id: str) -> None:
        self._leases.release(session_id)


def _busy() -> ServiceError:
    return ServiceError(409, "session_busy", "A reply is still streaming in this session: "
                        "stop it or wait for it to finish.")


def _check_text(field: str, value) -> None:
    if not isinstance(value, str) or not value.strip():
        raise invalid(field, "must be a non-empty string")
    encodable(field, value)
    if len(value) > MESSAGE_MAX:
        raise invalid(field, f"must not be longer than {MESSAGE_MAX} characters")


def _error_event(err: ServiceError) -> ChatEvent:
    code = "invalid_request" if err.status == 400 else err.code
    return events.error(code, err.message, err.code == "session_busy", err.extra.get("field"))


def _close(upstream) -> None:
    close = getattr(upstream, "close", None)
    if close is not None:
        close()
