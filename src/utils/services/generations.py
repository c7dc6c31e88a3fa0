"""Replies generated independently of any connection, and followers that attach to them.

A reply runs in its own thread; sockets and SSE responses only follow it, so a reload, a closed
tab or a dropped connection never cuts it, and stopping is an explicit request. A follower in the
generating process is handed the text by the reply's own thread (`Generation.attach`: the socket
that started the reply is sent its frames, an SSE response or a resume reads a `ReplyFeed`); a
follower in another worker process tails the reply's row. One sync thread per process keeps the rows of its replies
current, every `SYNC_SECONDS` for a reply something outside the process follows (a tailing
follower or a page showing the reply leaves a `followed` mark on its row) and every
`CHECKPOINT_SECONDS` for the others (what a crash can lose of a reply nobody watches), in one
transaction for all replies due, so most short replies are written twice only: empty at the
start, whole at the end. Followers count what they have sent in characters of the reply, so a
resumed stream never repeats text. A stop requested from another process is a mark on the row
that the same sync thread notices: whoever leaves a mark rings the generating processes'
bells (`process_bells.py`), and the sync thread looks at once; without a ring it looks only when
a flush is due (with no bells, as in tests that build a bare hub, every `SYNC_SECONDS`). While
the process runs no reply the sync thread sleeps without a timeout (marks can only be left on
replies that run) and `launch` wakes it, so an idle worker spends nothing on it.
Only threads, locks and events are used, so this works under gthread and gevent workers.
"""
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator

from .. import cooperative
from ..api_request import CancelSignal
from ..models.sessions import Message
from ..process_bells import ProcessBells
from ..storage import Database, messages as message_store
from ..storage.db import transaction
from ..text import scrub
from . import chat_events as events
from .chat_events import ChatEvent
from .reply_feed import ReplyFeed

log = logging.getLogger(__name__)
SYNC_SECONDS = 0.25
CHECKPOINT_SECONDS = 5.0
TAIL_SECONDS = 0.2
WAIT_SECONDS = 1.0


class Generation:
    """One reply being generated in this process: the text so far and, at the end, the final event."""

    def __init__(self, session_id: str, parent_id: int, reply_id: int, prefix: str = "",
                 persona_id: str | None = None):
        self.session_id = session_id
        self.persona_id = persona_id
        self.parent_id = parent_id
        self.reply_id = reply_id
        self.prefix_length = len(prefix)
        self.cancel = CancelSignal()
        self._lock = threading.Lock()
        self._pieces: list[str] = [prefix] if prefix else []
        self._length = len(prefix)
        self._final: ChatEvent | None = None
        self._flushed = len(prefix)
        self._flushed_at = time.monotonic()
        self.followed = False  # set by the sync thread once another process asked for the text
        self._sinks: list[Callable[[ChatEvent], object]] = []

    def start_event(self) -> ChatEvent:
        """The `start` event every follower receives first."""
        return events.start(self.session_id, self.parent_id, self.reply_id)

    def append(self, text: str) -> None:
        """Adds generated text (a lone surrogate becomes U+FFFD, same length) and hands it to
        the followers' sinks."""
        text = scrub(text)
        with self._lock:
            self._pieces.append(text)
            self._length += len(text)
            sinks = list(self._sinks)
        if sinks and text:
            self._deliver(sinks, events.chunk(text))

    def finish(self, final: ChatEvent) -> None:
        """Ends the generation with its `done` or `error` event."""
        with self._lock:
            self._final = final
            sinks, self._sinks = self._sinks, []
        self._deliver(sinks, final)

    def attach(self, sink: Callable[[ChatEvent], object], offset: int) -> list[ChatEvent]:
        """Makes the reply's own thread call `sink` with each later chunk and the final event
        (the socket that started a reply is sent its frames, and a `ReplyFeed` fed, without a
        follower's hop); returns
        what is already there beyond `offset` (the text as one chunk, the end if any), which
        the caller sends first. The caller keeps `sink` from sending until it has."""
        with self._lock:
            pieces = "".join(self._pieces)[offset:]
            backlog = [events.chunk(pieces)] if pieces else []
            if self._final is not None:
                return [*backlog, self._final]
            self._sinks.append(sink)
            return backlog

    def detach(self, sink: Callable[[ChatEvent], object]) -> None:
        """Stops calling `sink`."""
        with self._lock:
            if sink in self._sinks:
                self._sinks.remove(sink)

    def _deliver(self, sinks: list, event: ChatEvent) -> None:
        for sink in sinks:
            try:
                sink(event)
            except Exception:
                log.exception("Sending a frame of reply %s failed", self.reply_id)

    def text(self) -> str:
        """Everything generated so far (with the continued prefix, if any)."""
        with self._lock:
            return "".join(self._pieces)

    @property
    def finished(self) -> bool:
        """True once the final event is set."""
        return self._final is not None

    def due(self, now: float, checkpoint: float) -> bool:
        """True when the row lacks text and someone elsewhere follows the reply, or its last
        flush is `checkpoint` seconds old (what a crash may lose of a reply nobody follows)."""
        with self._lock:
            return self._length > self._flushed and (
                self.followed or now - self._flushed_at >= checkpoint)

    def next_flush(self, checkpoint: float) -> float:
        """When (monotonic) the row is next due a flush: `SYNC_SECONDS` after the last one
        while followed elsewhere, else `checkpoint` after it."""
        with self._lock:
            return self._flushed_at + (SYNC_SECONDS if self.followed else checkpoint)

    def caught_up(self, now: float) -> None:
        """A look at `now` found the row holding all the text: the next checkpoint counts
        from here (a reply that pauses is not looked at again and again for nothing)."""
        with self._lock:
            if self._length == self._flushed:
                self._flushed_at = now

    def flushed(self, length: int, now: float) -> None:
        """Records that the row holds the first `length` characters since `now`."""
        with self._lock:
            self._flushed = max(self._flushed, length)
            self._flushed_at = now


class GenerationHub:
    """The replies this process generates, their threads, and the watcher for remote stops."""

    def __init__(self, db: Database, checkpoint: float = CHECKPOINT_SECONDS,
                 bells: ProcessBells | None = None):
        self._db = db
        self._checkpoint = checkpoint
        self._bells = bells
        self._rang = threading.Event()  # a mark was left on some reply (or the hub closes)
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # notified when a reply starts, at close
        self._running: dict[int, Generation] = {}
        self._threads: set[cooperative.Task] = set()
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()
        self._sleeping = False
        self._on_start: list[Callable[[], object]] = []
        self._on_idle: list[Callable[[], object]] = []

    def launch(self, generation: Generation, work: Callable[[Generation], None]) -> None:
        """Runs `work(generation)` in its own thread (a greenlet under gevent); the generation
        is followable at once."""
        thread = cooperative.task(lambda: self._run(generation, work, thread),
                                  f"reply-{generation.reply_id}")
        with self._lock:
            self._running[generation.reply_id] = generation
            self._threads.add(thread)
            self._work.notify()
            first = self._watcher is None
            if first:
                self._watcher = threading.Thread(target=self._sync, name="reply-sync",
                                                 daemon=True)
                self._watcher.start()
        if first and self._bells is not None:
            self._bells.listen(self._rang.set)
        thread.start()
        for callback in self._on_start:
            callback()

    def on_start(self, callback: Callable[[], object]) -> None:
        """Calls `callback()` each time a reply starts (the worker's idle trim sleeps until
        then, `worker_memory.IdleTrim`)."""
        self._on_start.append(callback)

    def on_idle(self, callback: Callable[[], object]) -> None:
        """Calls `callback()` each time the last running reply ends (`worker_memory.IdleTrim`)."""
        self._on_idle.append(callback)

    def ring(self) -> None:
        """Tells the generating processes (this one too) that a mark was left on a reply."""
        if self._bells is not None:
            self._bells.ring()

    def busy(self) -> bool:
        """True while this process generates any reply."""
        with self._lock:
            return bool(self._running)

    @property
    def sleeping(self) -> bool:
        """True while the sync thread waits for a reply to start (tests look)."""
        with self._lock:
            return self._sleeping

    def local(self, reply_id: int) -> Generation | None:
        """The generation of `reply_id` if this process runs it."""
        with self._lock:
            return self._running.get(reply_id)

    def follow(self, generation: Generation, offset: int,
               detached: threading.Event | None = None) -> Iterator[ChatEvent]:
        """Chunks beyond `offset` (what exists already, and what piles up while the follower
        writes, as one chunk), then the final event, from a generation in this process, handed
        over by the reply's own thread (`ReplyFeed`); ends early (within `WAIT_SECONDS`) once
        `detached` is set or the process closes."""
        detached = detached or threading.Event()
        feed = ReplyFeed(generation, offset)
        yield from feed.events(lambda: detached.is_set() or self._closed.is_set(), WAIT_SECONDS)

    def tail(self, reply_id: int, offset: int, settle: Callable[[Message], Message | None],
             final_of: Callable[[Message | None], ChatEvent],
             detached: threading.Event | None = None) -> Iterator[ChatEvent]:
        """Chunks beyond `offset`, then the final event, from the reply's row (another process
        generates it), which is marked as followed so that process flushes its text.
        `settle(row)` ends an orphaned reply (its process died) and returns it."""
        detached = detached or threading.Event()
        marked = False
        while not self._closed.is_set() and not detached.is_set():
            local = self.local(reply_id)
            if local is not None:
                yield from self.follow(local, offset, detached)
                return
            row = message_store.get_message(self._db.conn(), reply_id)
            if row is not None and row.streaming:
                row = settle(row)
            if not marked and row is not None and row.streaming:
                if message_store.mark_followed(self._db.conn(), [reply_id]):
                    self.ring()
                marked = True  # its process keeps the row's text current from its next sync
            if row is not None and len(row.content) > offset:
                yield events.chunk(row.content[offset:])
                offset = len(row.content)
            if row is None or not row.streaming:
                yield final_of(row)
                return
            detached.wait(TAIL_SECONDS)

    def close(self, timeout: float = 10.0) -> None:
        """Stops every reply of this process and waits for their threads."""
        self._closed.set()
        self._rang.set()
        with self._lock:
            self._work.notify_all()
            running = list(self._running.values())
            threads = list(self._threads) + ([self._watcher] if self._watcher else [])
        for generation in running:
            generation.cancel.set()
        for thread in threads:
            thread.join(timeout)
        if self._bells is not None:
            self._bells.close()

    def _run(self, generation: Generation, work: Callable[[Generation], None],
             thread: cooperative.Task) -> None:
        try:
            work(generation)
        except Exception:
            log.exception("Reply %s failed outside its own error handling", generation.reply_id)
            if not generation.finished:
                generation.finish(events.error("internal_error", "Something went wrong on the "
                                               "server while answering.", True))
        finally:
            with self._lock:
                self._running.pop(generation.reply_id, None)
                self._threads.discard(thread)
                idle = not self._running
            self._db.close_thread()
            if idle:
                for callback in self._on_idle:
                    callback()

    def _sync(self) -> None:
        """While replies run: reads the marks other processes left on this process's replies
        (a stop, a follower, the row gone: its session was deleted, in any process, and the
        upstream request is closed rather than paid for to the end), then flushes the new text
        of those that are due (`Generation.due`) in one transaction; at once after a ring,
        else when the next flush is due. With no reply running at that look it waits for
        `launch` (or `close`) instead; replies ending do not wake it (back-to-back turns
        would each cost it a wake: it goes to sleep at its next look)."""
        conn = self._db.conn()
        try:
            while not self._closed.is_set():
                running = self._replies_or_wait()
                if not running:
                    continue
                self._rang.wait(self._until_look(running))
                self._rang.clear()
                running = self._replies()
                if self._closed.is_set() or not running:
                    continue
                try:
                    self._check_marks(conn, running)
                    self._flush(conn, running)
                except Exception:
                    log.exception("Could not flush the replies in progress")
        finally:
            self._db.close_thread()

    def _until_look(self, running: list[Generation]) -> float:
        """Seconds until the sync thread looks unless rung: every `SYNC_SECONDS` without
        bells (nothing rings), else when the first flush falls due."""
        if self._bells is None:
            return SYNC_SECONDS
        soonest = min(g.next_flush(self._checkpoint) for g in running)
        return min(max(soonest - time.monotonic(), SYNC_SECONDS), self._checkpoint)

    def _replies(self) -> list[Generation]:
        with self._lock:
            return list(self._running.values())

    def _replies_or_wait(self) -> list[Generation]:
        """The replies running now; with none, first sleeps until one starts or the hub
        closes (`_work`)."""
        with self._lock:
            while not self._running and not self._closed.is_set():
                self._sleeping = True
                self._work.wait()
            self._sleeping = False
            return list(self._running.values())

    def _check_marks(self, conn: sqlite3.Connection, running: list[Generation]) -> None:
        marks = message_store.reply_marks(conn, [g.reply_id for g in running])
        for generation in running:
            mark = marks.get(generation.reply_id, "gone")
            if mark in ("stop_requested", "gone"):
                generation.cancel.set()
            elif mark == "followed":
                generation.followed = True

    def _flush(self, conn: sqlite3.Connection, running: list[Generation]) -> None:
        now = time.monotonic()
        for generation in running:
            generation.caught_up(now)
        due = [(g, g.text()) for g in running if g.due(now, self._checkpoint)]
        if not due:
            return
        with transaction(conn):
            message_store.save_partial_replies(conn, [(text, g.reply_id) for g, text in due])
        for generation, text in due:
            generation.flushed(len(text), now)
