"""Session titles written by the model after the first exchange, off the request thread.

A title is a nicety: failures are logged and the session simply stays untitled (it is tried again
after a later reply). Listeners (the WebSocket) hear about each title that was applied.
"""
import logging
import threading
from collections.abc import Callable

from ..api_request import ApiClient
from ..api_request.types import RequestConfig
from ..listeners import Listeners
from ..models.sessions import Session
from ..storage import Database, personas as persona_store, sessions as session_store
from . import prompt_builder as prompts
from .session_service import SessionService
from .settings_service import SettingsService

log = logging.getLogger(__name__)
TITLE_MAX_TOKENS = 30


class TitleGenerator:
    """Asks the model for a short session title in a background thread and stores it."""

    def __init__(self, db: Database, api_client: ApiClient, sessions: SessionService,
                 settings: SettingsService):
        self._db = db
        self._api = api_client
        self._sessions = sessions
        self._settings = settings
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._listeners: Listeners[Session] = Listeners("A title listener failed")

    def subscribe(self, listener: Callable[[Session], None]) -> Callable[[], None]:
        """Calls `listener(session)` after a title was stored; returns the unsubscribe function."""
        return self._listeners.subscribe(listener)

    def schedule(self, session_id: str, user_text: str, reply_text: str) -> bool:
        """Starts naming the session unless that is already under way; True when started."""
        with self._lock:
            if session_id in self._pending:
                return False
            self._pending.add(session_id)
        threading.Thread(target=self._run, args=(session_id, user_text, reply_text),
                         name=f"title-{session_id}", daemon=True).start()
        return True

    def generate(self, session_id: str, user_text: str, reply_text: str) -> Session | None:
        """Requests and stores a title now; returns the updated session, or None."""
        conn = self._db.conn()
        session = session_store.get_session(conn, session_id)
        persona = persona_store.get_persona(conn, session.persona_id) if session else None
        if session is None or persona is None or session.title:
            return None
        app = self._settings.values()
        language = prompts.language_of(persona.get("language"), app.get("language"))
        prompt = prompts.title_prompt(persona, prompts.user_name_for(persona, app, language),
                                      user_text, reply_text, language)
        response = self._api.request(RequestConfig(
            system_prompt="", messages=[{"role": "user", "content": prompt}],
            model=app.get("model"), max_tokens=TITLE_MAX_TOKENS, request_type="title"))
        if not response.success:
            log.warning("No title for session %s: %s", session_id, response.error)
            return None
        return self._sessions.set_title(session_id, response.content)

    def _run(self, session_id: str, user_text: str, reply_text: str) -> None:
        try:
            session = self.generate(session_id, user_text, reply_text)
            if session is not None:
                self._listeners.notify(session)
        except Exception:
            log.exception("Title generation failed for session %s", session_id)
        finally:
            with self._lock:
                self._pending.discard(session_id)
