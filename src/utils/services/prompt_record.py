"""Recording the request a reply was generated from, as it went on the wire (issue 24).

The engine hands over the SDK's own body bytes once the request is sent (`RequestConfig.on_sent`);
`SentCapture` keeps them in memory while the reply streams (nothing is written before the end),
and `store` writes them with the reply's usage in the transaction that
stores the reply (one write per turn). The
first system text (persona and cortex) is the prefix stored once per content. It is found by
looking for its JSON encoding in the body (one search in C); only a body that does not hold it
in that encoding is walked string by string (`json_spans`, about 0.6 ms for an 8 KB body).
"""
from __future__ import annotations

import json
import logging
import sqlite3

from ..api_request.types import RequestConfig, SentRequest, SystemBlock
from ..storage import prompt_records
from .json_spans import char_to_byte, string_spans

log = logging.getLogger(__name__)


class SentCapture:
    """The request a reply's stream sent, and the layout of its system blocks."""

    def __init__(self, config: RequestConfig):
        system = config.system_prompt
        blocks = system if isinstance(system, list) else [SystemBlock(system, label="persona")]
        self.layout = [{"label": block.label, "cache": block.cache, "chars": len(block.text)}
                       for block in blocks if block.text]
        self.first = next((block.text for block in blocks if block.text), "")
        self.sent: SentRequest | None = None

    def __call__(self, sent: SentRequest) -> None:
        self.sent = sent


def store(conn: sqlite3.Connection, reply_id: int, capture: SentCapture, usage: dict | None) -> None:
    """Records the captured request of reply `reply_id` with its usage; nothing when no request
    went out. A failure is logged and undoes only the record (a savepoint): the reply is still
    stored."""
    sent = capture.sent
    if sent is None:
        return
    try:
        prompt_records.save(conn, reply_id, sent.provider, sent.model, capture.layout,
                            sent.body, _prefix(sent, capture.layout, capture.first), usage)
    except Exception:
        log.exception("Could not record the request of reply %s", reply_id)


def _prefix(sent: SentRequest, layout: list[dict], first: str = ""
            ) -> tuple[int, int] | None:
    """The byte span of the first system block's text `first` (the part every turn repeats)."""
    found = _encoded_span(sent, first)
    if found is not None:
        return found
    spans = string_spans(sent.body)
    if sent.provider == "openai_compatible":
        span = spans.get(("messages", 0, "content"))
        if span is None or not layout:
            return None
        start, end = span
        return start + 1, start + char_to_byte(sent.body[start:end], int(layout[0]["chars"]))
    span = spans.get(("system", 0, "text")) or spans.get(("system",))
    return (span[0] + 1, span[1] - 1) if span else None


def _encoded_span(sent: SentRequest, first: str) -> tuple[int, int] | None:
    """Where `first`, encoded as both SDKs encode strings (`json.dumps`, `ensure_ascii` off),
    begins a string after the field that holds it (`"system"`; OpenAI-compatible: `"messages"`,
    whose first message is the system prompt, `first` at its start); None when it is not
    there that way (the caller then walks the body). The prefix's bytes are cut out and put
    back at the same place, so the record is exact wherever such bytes are found."""
    if not first:
        return None
    token = json.dumps(first, ensure_ascii=False).encode("utf-8")
    openai = sent.provider == "openai_compatible"
    field = sent.body.find(b'"messages"' if openai else b'"system"')
    if field < 0:
        return None
    start = sent.body.find(token[:-1] if openai else token, field)
    if start < 0:
        return None
    return start + 1, start + len(token) - 1
