"""Streaming one reply from the model into its `Generation` and its stored row.

The row exists from the start (`streaming` = 1, status 'incomplete'); the hub's sync thread
writes its text while it grows, often while another process follows it, now and then otherwise
(see generations.py). At the end the row gets its final text and status: complete,
incomplete (stopped, cut off, or failed after some text, with the failure in `error`), or it is
deleted when it was stopped before any text arrived. A failure with no text is kept, so the turn
shows the failure and a Retry after a reload.
"""
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from ..api_request import ApiClient
from ..api_request.types import RequestConfig
from ..storage import Database, messages as message_store
from .generations import Generation

CANCELLED = "cancelled"


@dataclass
class Outcome:
    """How a reply ended: its stored row (None if dropped) and the stream's final data."""

    stored: dict | None
    text: str
    complete: bool
    stop_reason: str | None
    usage: dict | None
    error: dict | None


Record = Callable[[sqlite3.Connection, "dict | None"], None]
Sources = tuple[dict | None, list[dict]]  # chat_prompt.PromptSources: revisions, fired


def stream_reply(db: Database, api: ApiClient, generation: Generation, config: RequestConfig,
                 record: Record | None = None, sources: Sources | None = None) -> Outcome:
    """Runs the upstream stream for `generation` and stores the result on its row, with
    `sources` (what its prompt held: `finish_reply`'s) in the same update; `record` (given the
    connection and the usage) writes what else belongs to a stored reply in the same
    transaction, so a turn ends with one write."""
    finished: dict = {}
    upstream = api.stream(config, generation.cancel)
    try:
        for event in upstream:
            if event.event_type == "chunk" and event.data:
                generation.append(event.data)
            elif event.event_type in ("done", "error"):
                finished = {"type": event.event_type, **(event.data or {})}
    finally:
        close = getattr(upstream, "close", None)
        if close is not None:
            close()
    return _store(db, generation, finished, record, sources)


def failure_outcome(db: Database, generation: Generation, code: str, message: str) -> Outcome:
    """Stores a failure that happened outside the stream (a bug) on the reply's row."""
    return _store(db, generation, {"type": "error", "code": code, "message": message,
                                   "retryable": True})


def _store(db: Database, generation: Generation, finished: dict, record: Record | None = None,
           sources: Sources | None = None) -> Outcome:
    text = generation.text()
    error = None
    if finished.get("type") == "error":
        error = {"code": finished.get("code") or "api_error",
                 "message": finished.get("message") or "The reply failed.",
                 "retryable": bool(finished.get("retryable"))}
    stop_reason = finished.get("stop_reason") if finished.get("type") == "done" else None
    complete = error is None and finished.get("type") == "done" and stop_reason != CANCELLED
    if not finished:
        stop_reason = CANCELLED
    if error is None and not text.strip() and not complete:
        message_store.delete_message(db.conn(), generation.reply_id, cause="regenerate")
        stored = None
    else:
        with db.transaction() as conn:
            stored = message_store.finish_reply(conn, generation.reply_id, text,
                                                "complete" if complete else "incomplete",
                                                stop_reason, error, sources)
            if stored is not None and record is not None:
                record(conn, finished.get("usage"))
    return Outcome(stored, text, complete, stop_reason or (None if error else CANCELLED),
                   finished.get("usage"), error)
