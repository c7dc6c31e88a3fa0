"""One browser's chat WebSocket: reads frames, streams one reply at a time, pushes background news.

The reply runs in the connection's worker thread so the reading loop can still take a `stop`
frame mid-stream. Cortex and title events are pushed from the threads that finish those jobs, so
every send goes through one lock. Nothing here knows about Flask: `ws` is anything with
`receive()` and `send()`.
"""
import logging
import queue
import socket
import threading
from typing import Callable, Iterator

from simple_websocket import ConnectionClosed

from ..api_request import CancelSignal
from . import chat_events as events
from .chat_events import ChatEvent
from .chat_frames import FrameError, parse_frame
from .errors import ServiceError
from .ids import is_persona_id

log = logging.getLogger(__name__)
JOIN_TIMEOUT = 10.0
FINAL = ("done", "error")
Unsubscribe = Callable[[], None]


def run_chat_socket(ws, chat, *, subscribe_jobs: Callable[..., Unsubscribe] | None = None,
                    titles=None) -> None:
    """Serves one chat WebSocket until the client goes away."""
    ChatSocket(ws, chat, subscribe_jobs=subscribe_jobs, titles=titles).run()


class ChatSocket:
    """The state of one connection: the reply in flight and the personas and sessions it follows."""

    def __init__(self, ws, chat, *, subscribe_jobs=None, titles=None):
        self._ws = ws
        self._chat = chat
        self._subscribe_jobs = subscribe_jobs
        self._titles = titles
        self._send_lock = threading.Lock()
        self._closed = threading.Event()
        self._personas: set[str] = set()
        self._sessions: set[str] = set()
        self._state_lock = threading.Lock()
        self._current: threading.Event | None = None
        self._replies: queue.SimpleQueue = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="chat-socket-replies",
                                        daemon=True)

    def run(self) -> None:
        """Reads frames until the socket closes, then stops the reply and unsubscribes."""
        _send_at_once(self._ws)
        self._worker.start()
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
        except ConnectionClosed:
            pass
        finally:
            self._closed.set()
            self._on_stop({})
            for unsubscribe in unsubscribes:
                unsubscribe()
            self._replies.put(None)
            self._worker.join(JOIN_TIMEOUT)

    def _handle(self, raw) -> None:
        """Answers any frame: a handler's events, or one `error` event; never raises."""
        try:
            frame = parse_frame(raw)
        except FrameError as err:
            self._send(events.error("invalid_request", str(err), field=err.field))
            return
        handler = {"chat": self._on_chat, "regenerate": self._on_regenerate,
                   "stop": self._on_stop, "subscribe": self._on_subscribe}[frame["type"]]
        try:
            handler(frame)
        except Exception:
            log.exception("Chat socket failed on a %s frame", frame["type"])
            self._send(events.error("internal_error", "Something went wrong on the server.",
                                    True))

    def _on_chat(self, frame: dict) -> None:
        session_id, message = frame.get("session_id"), frame.get("message")
        self._start(session_id, lambda: self._chat.check_turn(session_id, message),
                    lambda cancel: self._chat.run_turn(session_id, message, cancel))

    def _on_regenerate(self, frame: dict) -> None:
        session_id = frame.get("session_id")
        self._start(session_id, lambda: self._chat.check_regenerate(session_id),
                    lambda cancel: self._chat.regenerate(session_id, cancel))

    def _on_stop(self, frame: dict) -> None:
        with self._state_lock:
            if self._current is not None:
                self._current.set()

    def _on_subscribe(self, frame: dict) -> None:
        persona_id = frame.get("persona_id")
        if not isinstance(persona_id, str) or not is_persona_id(persona_id):
            self._send(events.error("invalid_request", "subscribe needs a valid persona_id."))
            return
        self._personas.add(persona_id)
        self._send(ChatEvent("subscribed", {"persona_id": persona_id}))

    def _start(self, session_id, check: Callable[[], dict],
               stream: Callable[[threading.Event], Iterator[ChatEvent]]) -> None:
        if self._current is not None:
            self._send(events.error("busy", "A reply is still streaming on this connection: "
                                    "stop it first.", True))
            return
        try:
            session = check()
        except ServiceError as err:
            code = "invalid_request" if err.status == 400 else err.code
            self._send(events.error(code, err.message, err.code == "session_busy",
                                    field=err.extra.get("field")))
            return
        self._personas.add(session["persona_id"])
        self._sessions.add(session_id)
        with self._state_lock:
            self._current = cancel = CancelSignal()
        self._replies.put((stream(cancel), cancel))

    def _work(self) -> None:
        """The connection's reply thread (one per socket, so its database connection is reused)."""
        while (job := self._replies.get()) is not None:
            self._stream(*job)

    def _stream(self, replies: Iterator[ChatEvent], cancel: threading.Event) -> None:
        """Forwards the reply's events; the connection counts as free before the final one is
        sent, so the client may start the next reply as soon as it sees `done` or `error`."""
        try:
            for event in replies:
                if event.type in FINAL:
                    self._finish(cancel)
                if not self._send(event):
                    cancel.set()
                    break
        finally:
            self._finish(cancel)
            replies.close()

    def _finish(self, cancel: threading.Event) -> None:
        with self._state_lock:
            if self._current is cancel:
                self._current = None

    def _on_job(self, job: dict) -> None:
        if job.get("persona_id") in self._personas:
            self._send(ChatEvent("cortex", {
                "job_id": job.get("job_id"), "persona_id": job.get("persona_id"),
                "status": job.get("status"), "files": job.get("files") or [],
                "error": job.get("error")}))

    def _on_title(self, session: dict) -> None:
        if session.get("id") in self._sessions:
            self._send(ChatEvent("title", {"session_id": session["id"],
                                           "title": session.get("title")}))

    def _send(self, event: ChatEvent) -> bool:
        with self._send_lock:
            if self._closed.is_set():
                return False
            try:
                self._ws.send(events.to_frame(event))
                return True
            except (ConnectionClosed, OSError):
                self._closed.set()
                return False


def _send_at_once(ws) -> None:
    """Turns off Nagle's algorithm: a chunk is a small write that must not wait for an ACK."""
    sock = getattr(ws, "sock", None)
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
