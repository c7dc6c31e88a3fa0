"""Session titles written by the model after the first exchange, off the chat's path.

A chat turn only queues the request (`storage/title_jobs.py`, one row); who runs it depends on
how the app is served. Under gunicorn the memory process claims it (`run_next`, with an owner
token and a lease like a cortex job; the queuing worker rings its doorbell, `ring`, so it
takes the request at once without looking for one) and each chat worker learns of the titles it set by
looking when the memory process rings their news bells (`told`, utils/process_bells.py), or
on its own every `NEWS_SECONDS` (`announce_finished`); an app without a memory process (tests, the
threaded live server) runs it in a thread of its own (`inline`). A title is a nicety: failures
are logged and the session simply stays untitled (it is queued again after a later reply), and
nothing ever waits for one. Listeners (the WebSocket) hear about each title that was applied.
"""
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial

from ..api_request import ApiClient
from ..api_request.types import RequestConfig
from ..cortex.heartbeat import Heartbeat
from ..cortex.ownership import ProcessOwner
from ..listeners import Listeners
from ..models.sessions import Session, SessionRow
from ..models.titles import TitleJob
from ..storage import Database, personas as persona_store, sessions as session_store, title_jobs
from ..storage.clock import utc_now
from . import prompt_builder as prompts
from .session_service import SessionService
from .settings_service import SettingsService

log = logging.getLogger(__name__)
TITLE_MAX_TOKENS = 30
LEASE_SECONDS = 60.0
LOOK_BACK = timedelta(seconds=5)  # a title committed just after a later one is still seen
CLOSE_WAIT = 5.0  # seconds `close` waits for inline requests in flight


class TitleGenerator:
    """Queues session titles, runs queued ones, and tells listeners when one was applied."""

    def __init__(self, db: Database, api_client: ApiClient, sessions: SessionService,
                 settings: SettingsService, owner: ProcessOwner, *,
                 inline: bool = True, lease_seconds: float = LEASE_SECONDS,
                 ring: Callable[[], None] | None = None,
                 told: Callable[[], None] | None = None):
        self._db = db
        self._ring = ring
        self._told = told
        self._api = api_client
        self._sessions = sessions
        self._settings = settings
        self._owner = owner
        self._inline = inline
        self._lease = lease_seconds
        self._lock = threading.Lock()
        self._listeners: Listeners[SessionRow] = Listeners("A title listener failed")
        self._announced: deque[str] = deque(maxlen=1000)
        self._watermark = utc_now()
        self._inline_threads: set[threading.Thread] = set()
        self._closed = False

    def subscribe(self, listener: Callable[[SessionRow], None]) -> Callable[[], None]:
        """Calls `listener(session)` after a title was stored; returns the unsubscribe function."""
        return self._listeners.subscribe(listener)

    def schedule(self, session_id: str, user_text: str, reply_text: str) -> bool:
        """Queues naming the session unless a request is already queued or running; True when
        queued now. Inline, a thread of this process runs it at once."""
        job, created = title_jobs.enqueue(self._db.conn(), session_id, user_text, reply_text,
                                          self._owner.is_alive)
        if created and self._inline:
            self._start_inline(job.id, session_id)
        elif created and self._ring is not None:
            self._ring()
        return created

    def close(self, timeout: float = CLOSE_WAIT) -> None:
        """Starts no more inline requests and waits (up to `timeout`) for those in flight, so
        the API client is closed after them rather than under them: an HTTP pool closed while
        a request is still connecting never learns of that connection, whose socket is then
        left to the garbage collector."""
        with self._lock:
            self._closed = True
            running = list(self._inline_threads)
        deadline = time.monotonic() + timeout
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))

    def run_next(self) -> bool:
        """Claims the oldest queued request and runs it (the memory process); False when none
        was queued."""
        job = title_jobs.claim(self._db.conn(), self._owner.token, self._lease)
        if job is None:
            return False
        self._execute(job)
        return True

    def recover(self) -> int:
        """Fails running requests whose owner died or whose lease ran out (each pass of the
        memory process), and prunes old finished ones."""
        conn = self._db.conn()
        title_jobs.prune(conn)
        count = title_jobs.fail_interrupted(conn, self._owner.is_alive)
        if count:
            log.warning("Marked %d interrupted title request(s) as failed", count)
        return count

    def announce_finished(self) -> None:
        """Tells listeners of the titles another process applied since the last look."""
        for row in title_jobs.titled_since(self._db.conn(), _earlier(self._watermark)):
            self._watermark = max(self._watermark, row.finished_at)
            if row.job_id not in self._announced:
                self._announced.append(row.job_id)
                session = session_store.get_session_row(self._db.conn(), row.id)
                if session is not None:
                    self._listeners.notify(session)

    def generate(self, session_id: str, user_text: str, reply_text: str) -> Session | None:
        """Requests and stores a title now; returns the updated session, or None."""
        conn = self._db.conn()
        session = session_store.get_session(conn, session_id)
        persona = persona_store.get_persona(conn, session.persona_id) if session else None
        if session is None or persona is None or session.title:
            return None
        app = self._settings.values()
        language = prompts.language_of(persona.language, app.language)
        prompt = prompts.title_prompt(persona, prompts.user_name_for(persona, app.user_name,
                                                                     language),
                                      user_text, reply_text, language)
        response = self._api.request(RequestConfig(
            system_prompt="", messages=[{"role": "user", "content": prompt}],
            model=app.model, max_tokens=TITLE_MAX_TOKENS, request_type="title"))
        if not response.success:
            log.warning("No title for session %s: %s", session_id, response.error)
            return None
        return self._sessions.set_title(session_id, response.content)

    def _start_inline(self, job_id: str, session_id: str) -> None:
        """Runs the request in a thread of its own, unless the generator is closed (then the
        row stays queued, as it would had the process ended)."""
        thread = threading.Thread(target=self._run_inline, args=(job_id,),
                                  name=f"title-{session_id}", daemon=True)
        with self._lock:
            if self._closed:
                return
            self._inline_threads.add(thread)
        thread.start()

    def _run_inline(self, job_id: str) -> None:
        try:
            job = title_jobs.claim(self._db.conn(), self._owner.token, self._lease, job_id)
            if job is not None:
                self._execute(job)
        finally:
            self._db.close_thread()
            with self._lock:
                self._inline_threads.discard(threading.current_thread())

    def _execute(self, job: TitleJob) -> None:
        """Runs a claimed request under a renewed lease, records how it ended, and tells this
        process's listeners (the memory process has none; chat workers look themselves)."""
        session: Session | None = None
        error: str | None = "no_title"
        renew = partial(title_jobs.renew_lease, job_id=job.id, owner=self._owner.token,
                        lease_seconds=self._lease)
        try:
            with Heartbeat(self._db.path, renew, self._lease, f"Title request {job.id}"):
                session = self.generate(job.session_id, job.user_text, job.reply_text)
            error = None if session is not None else error
        except Exception:
            log.exception("Title generation failed for session %s", job.session_id)
            error = "internal_error"
        title_jobs.finish(self._db.conn(), job.id, self._owner.token, error)
        if session is not None:
            self._announced.append(job.id)
            self._listeners.notify(session)
            if self._told is not None:
                self._told()  # the other processes' sockets hear of it now


def _earlier(stamp: str) -> str:
    """The stored timestamp `stamp` less LOOK_BACK, in the same format."""
    moment = datetime.fromisoformat(stamp) - LOOK_BACK
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
