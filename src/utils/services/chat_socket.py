"""One browser's chat WebSocket: reads frames, follows one reply at a time, pushes background news.

Replies are generated independently of the socket (`generations.py`): this connection only
follows one, so the reading loop can still take frames mid-stream. A reply this socket started
sends its frames from its own thread (`Generation.attach`); one it resumes is followed in a
follower thread. Closing the socket, or following another session (`resume`), detaches either;
the reply goes on.
`stop` is the explicit way to end a reply. Cortex and title events are pushed from the threads
that finish those jobs, so every send goes through one lock. Nothing here knows about Flask:
`ws` is anything with `receive()` and `send()` (`FrameSocket`).
"""
import logging
import socket
import threading
from collections.abc import Callable, Generator
from typing import Protocol

from simple_websocket import ConnectionClosed

from ..models.sessions import SessionRow
from . import chat_events as events
from .chat_events import ChatEvent
from .chat_frames import FrameError, parse_frame
from .chat_service import ChatService
from .chat_titles import TitleGenerator
from .errors import ServiceError, not_found
from .generations import Generation
from .ids import is_persona_id, is_session_id

log = logging.getLogger(__name__)
JOIN_TIMEOUT = 5.0
FINAL = ("done", "error")
Unsubscribe = Callable[[], None]


class FrameSocket(Protocol):
    """What the chat needs of a WebSocket (simple-websocket's `Server`, or a test's fake)."""

    def receive(self) -> str | bytes | None: ...

    def send(self, data: str) -> None: ...


def run_chat_socket(ws: FrameSocket, chat: ChatService, *,
                    subscribe_jobs: Callable[..., Unsubscribe] | None = None,
                    titles: TitleGenerator | None = None,
                    after_frame: Callable[[], None] | None = None) -> None:
    """Serves one chat WebSocket until the client goes away; `after_frame` runs after each
    frame (the app hands back the database connection an idle socket need not hold)."""
    ChatSocket(ws, chat, subscribe_jobs=subscribe_jobs, titles=titles,
               after_frame=after_frame).run()


class ChatSocket:
    """The state of one connection: the reply in flight and the personas and sessions it follows."""

    def __init__(self, ws: FrameSocket, chat: ChatService, *,
                 subscribe_jobs: Callable[..., Unsubscribe] | None = None,
                 titles: TitleGenerator | None = None,
                 after_frame: Callable[[], None] | None = None):
        self._ws = ws
        self._after_frame = after_frame
        self._chat = chat
        self._subscribe_jobs = subscribe_jobs
        self._titles = titles
        # Not reentrant (a reentrant lock costs four times as much under gevent, and every
        # chunk takes it): `_attach` sends the backlog it holds the lock for unlocked.
        self._send_lock = threading.Lock()
        self._closed = threading.Event()
        self._personas: set[str] = set()
        self._sessions: set[str] = set()
        self._state_lock = threading.Lock()
        self._current: _Follow | None = None
        self._followers: list[threading.Thread] = []

    def run(self) -> None:
        """Reads frames until the socket closes, then detaches and unsubscribes."""
        _send_at_once(self._ws)
        unsubscribes = []
        if self._subscribe_jobs is not None:
            unsubscribes.append(self._subscribe_jobs(self._on_job))
        if self._titles is not None:
            unsubscribes.append(self._titles.subscribe(self._on_title))
        try:
            while not self._closed.is_set():
                raw = self._ws.receive()
                if raw is not None:
                    self._handle(raw)
                    if self._after_frame is not None:
                        self._after_frame()
        except ConnectionClosed:
            pass
        finally:
            self._closed.set()
            self._detach()
            for unsubscribe in unsubscribes:
                unsubscribe()
            for thread in self._followers:
                thread.join(JOIN_TIMEOUT)

    def _handle(self, raw: str | bytes) -> None:
        """Answers any frame: a handler's events, or one `error` event; never raises."""
        try:
            frame = parse_frame(raw)
        except FrameError as err:
            self._send(events.error("invalid_request", str(err), field=err.field))
            return
        handler = {"chat": self._on_chat, "regenerate": self._on_regenerate,
                   "continue": self._on_continue, "resume": self._on_resume,
                   "stop": self._on_stop, "subscribe": self._on_subscribe}[frame["type"]]
        try:
            handler(frame)
        except ServiceError as err:
            code = "invalid_request" if err.status == 400 else err.code
            self._send(events.error(code, err.message, err.code == "session_busy",
                                    field=err.extra.get("field")))
        except Exception:
            log.exception("Chat socket failed on a %s frame", frame["type"])
            self._send(events.error("internal_error", "Something went wrong on the server.",
                                    True))

    def _on_chat(self, frame: dict) -> None:
        session_id, message = _session_id(frame.get("session_id")), frame.get("message")
        self._start(session_id, lambda: self._chat.start_chat(session_id, message))

    def _on_regenerate(self, frame: dict) -> None:
        message_id = _message_id(frame)
        session_id = self._session_of(frame, message_id)
        self._start(session_id, lambda: self._chat.start_regenerate(session_id, message_id))

    def _on_continue(self, frame: dict) -> None:
        message_id = _message_id(frame)
        if message_id is None:
            raise ServiceError(400, "invalid_request", "continue needs the message_id of a reply.")
        session_id = self._session_of(frame, message_id)
        self._start(session_id, lambda: self._chat.start_continue(session_id, message_id))

    def _on_resume(self, frame: dict) -> None:
        """Follows the session's reply in flight (start, the text so far, then live), or `idle`."""
        self._detach()
        session_id = _session_id(frame.get("session_id"))
        follow = _Follow(session_id)
        stream = self._chat.resume(session_id, detached=follow.detached)
        session = self._chat.session(session_id)
        self._watch(session.persona_id, session.id)
        if stream is None:
            self._send(events.idle(session.id))
            return
        self._begin(follow, stream)

    def _on_stop(self, frame: dict) -> None:
        session_id = frame.get("session_id")
        with self._state_lock:
            current = self._current
        if session_id is None and current is not None:
            session_id = current.session_id
        if session_id is not None:
            self._chat.stop(session_id)

    def _on_subscribe(self, frame: dict) -> None:
        persona_id = frame.get("persona_id")
        if not isinstance(persona_id, str) or not is_persona_id(persona_id):
            self._send(events.error("invalid_request", "subscribe needs a valid persona_id."))
            return
        self._personas.add(persona_id)
        self._send(ChatEvent("subscribed", {"persona_id": persona_id}))

    def _session_of(self, frame: dict, message_id: int | None) -> str:
        session_id = frame.get("session_id")
        if session_id is None and message_id is not None:
            session_id = self._chat.message(message_id).session_id
        return _session_id(session_id)

    def _start(self, session_id: str, launch: Callable[[], Generation]) -> None:
        """Starts a reply and follows it; a reply followed in another session is left to run
        (detached), one in the same session makes this `busy`."""
        with self._state_lock:
            current = self._current
        if current is not None and not current.finished and current.session_id == session_id:
            self._send(events.error("busy", "A reply is still streaming on this connection: "
                                    "stop it first.", True))
            return
        generation = launch()
        self._detach()
        follow = _Follow(generation.session_id)
        self._watch(generation.persona_id, generation.session_id)
        self._attach(follow, generation)

    def _watch(self, persona_id: str | None, session_id: str) -> None:
        if persona_id is not None:
            self._personas.add(persona_id)
        self._sessions.add(session_id)

    def _attach(self, follow: "_Follow", generation: Generation) -> None:
        """Follows a reply this socket started from the reply's own thread: it sends each
        chunk and the end as it produces them (no follower thread to wake per chunk). What
        exists already goes first, under the send lock, so nothing overtakes it."""
        def deliver(event: ChatEvent, send: Callable[[ChatEvent, _Follow], bool]) -> None:
            if event.type in FINAL:
                follow.finished = True
            if not send(event, follow):
                generation.detach(sink)

        def sink(event: ChatEvent) -> None:
            deliver(event, self._send)

        follow.release = lambda: generation.detach(sink)
        with self._state_lock:
            self._current = follow
        with self._send_lock:
            backlog = generation.attach(sink, generation.prefix_length)
            for event in (generation.start_event(), *backlog):
                deliver(event, self._send_held)

    def _begin(self, follow: "_Follow", stream: Generator[ChatEvent, None, None]) -> None:
        with self._state_lock:
            self._current = follow
        thread = threading.Thread(target=self._forward, args=(follow, stream),
                                  name="chat-socket-follower", daemon=True)
        self._followers = [t for t in self._followers if t.is_alive()] + [thread]
        thread.start()

    def _forward(self, follow: "_Follow", stream: Generator[ChatEvent, None, None]) -> None:
        """Sends the followed reply's events while this follow is current; the connection
        counts as free before the final one is sent, so the client may start the next reply
        as soon as it sees `done` or `error`."""
        try:
            for event in stream:
                if event.type in FINAL:
                    follow.finished = True
                if follow.detached.is_set() or not self._send(event, follow):
                    break
        finally:
            follow.finished = True
            stream.close()

    def _detach(self) -> None:
        with self._state_lock:
            current, self._current = self._current, None
        if current is not None:
            current.detached.set()
            if current.release is not None:
                current.release()

    def _on_job(self, job: dict) -> None:
        if job.get("persona_id") in self._personas:
            self._send(ChatEvent("cortex", {
                "job_id": job.get("job_id"), "persona_id": job.get("persona_id"),
                "status": job.get("status"), "files": job.get("files") or [],
                "error": job.get("error"), "reason": job.get("reason")}))

    def _on_title(self, session: SessionRow) -> None:
        if session.id in self._sessions:
            self._send(ChatEvent("title", {"session_id": session.id, "title": session.title}))

    def _send(self, event: ChatEvent, follow: "_Follow | None" = None) -> bool:
        with self._send_lock:
            return self._send_held(event, follow)

    def _send_held(self, event: ChatEvent, follow: "_Follow | None" = None) -> bool:
        """Sends `event` (the caller holds the send lock); False once the socket is closed or
        `follow` detached."""
        if self._closed.is_set() or (follow is not None and follow.detached.is_set()):
            return False
        try:
            self._ws.send(events.to_frame(event))
            return True
        except (ConnectionClosed, OSError):
            self._closed.set()
            return False


class _Follow:
    """The reply this connection follows: its session, and the flag that detaches it."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.detached = threading.Event()
        self.finished = False
        self.release: Callable[[], None] | None = None  # stops a reply's own sends to us


def _session_id(value: object) -> str:
    """A frame's `session_id` if it can be one; the service's own 404 otherwise."""
    if not isinstance(value, str) or not is_session_id(value):
        raise not_found("session", str(value))
    return value


def _message_id(frame: dict) -> int | None:
    value = frame.get("message_id")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 2**63:
        raise ServiceError(400, "invalid_request", "message_id must be a message id.")
    return value


def _send_at_once(ws: FrameSocket) -> None:
    """Turns off Nagle's algorithm: a chunk is a small write that must not wait for an ACK."""
    sock = getattr(ws, "sock", None)
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # the client closed right after the handshake: reading will tell
            log.debug("WebSocket closed before it was used")
