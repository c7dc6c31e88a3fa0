"""The prompt inspector (issue 24, docs/prompt-inspector.md): a reply's recorded request in
sections with token counts, and the context meter of a conversation."""
from __future__ import annotations

import json

from ..api_request import ApiClient
from ..models.sessions import Message
from ..storage import Database, prompt_records
from . import prompt_sections
from .errors import ServiceError
from .prompt_sections import Section
from .session_service import SessionService
from .token_counter import ESTIMATE, CountJob, TokenCounter

_PROVIDER_USAGE = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                   "cache_read_tokens": "cache_read_input_tokens",
                   "cache_write_tokens": "cache_creation_input_tokens"}


class PromptInspector:
    """Reads recorded requests; counts tokens through `TokenCounter`."""

    def __init__(self, db: Database, sessions: SessionService, api_client: ApiClient,
                 counter: TokenCounter):
        self._db = db
        self._sessions = sessions
        self._api = api_client
        self._counter = counter

    def inspect(self, session_id: str, message_id: int) -> dict:
        """The request reply `message_id` of the session was generated from, in sections."""
        message = self._sessions.message(session_id, message_id)  # 404s for unknown ids
        if message.role != "assistant":
            raise ServiceError(400, "not_a_reply", f"Message {message_id} is the person's own: "
                               "only a reply has a prompt.")
        record = prompt_records.load(self._db.conn(), message_id)
        shown = {"message_id": message_id, "session_id": session_id, "recorded": False,
                 "status": message.status, "provider": None, "model": None, "usage": None,
                 "total": None, "body_bytes": None, "sections": [],
                 "context_window": self._api.connection().window}
        if record is None:
            return shown
        sections = prompt_sections.split(record.body, record.layout, record.provider)
        counts = self._counter.count(record.provider, record.model,
                                     [*map(_job, sections), _whole(record.body)])
        shown.update(recorded=True, provider=record.provider, model=record.model,
                     created_at=record.created_at, usage=usage_of(record.usage, record.provider),
                     body_bytes=len(record.body),
                     total={"tokens": counts[-1][0], "counted_by": counts[-1][1]},
                     sections=[_shown(section, count, message)
                               for section, count in zip(sections, counts, strict=False)])
        return shown

    def context(self, session_id: str) -> dict:
        """How full the model's window was with the last request of the active branch."""
        self._sessions.summary(session_id)
        connection = self._api.connection()
        shown = {"session_id": session_id, "reply_id": None, "used": None, "counted_by": None,
                 "window": connection.window, "provider": connection.provider}
        conn = self._db.conn()
        reply_id = prompt_records.latest_of_session(conn, session_id)
        record = prompt_records.load(conn, reply_id) if reply_id is not None else None
        if record is None:
            return shown
        usage = usage_of(record.usage, record.provider)
        if usage and usage["prompt_tokens"]:
            used, source = usage["prompt_tokens"], "usage"
        else:
            used, source = _whole(record.body).estimate(), ESTIMATE
        return {**shown, "reply_id": reply_id, "used": used, "counted_by": source}


def usage_of(usage: dict | None, provider: str) -> dict | None:
    """The usage a reply reported in one vocabulary for both providers; `prompt_tokens` is
    everything the request held (Anthropic reports cache reads and writes apart from
    `input_tokens`; OpenAI-compatible endpoints count cached tokens inside it)."""
    if not usage:
        return None
    if provider == "openai_compatible":
        shown = {"input_tokens": usage.get("input_tokens", 0),
                 "output_tokens": usage.get("output_tokens", 0),
                 "cache_read_tokens": usage.get("cached_tokens", 0), "cache_write_tokens": 0}
        return {**shown, "prompt_tokens": shown["input_tokens"]}
    shown = {name: int(usage.get(key) or 0) for name, key in _PROVIDER_USAGE.items()}
    prompt = shown["input_tokens"] + shown["cache_read_tokens"] + shown["cache_write_tokens"]
    return {**shown, "prompt_tokens": prompt}


def _job(section: Section) -> CountJob:
    if section.messages is not None:
        return CountJob(messages=[{"role": m["role"], "content": m["text"]}
                                  for m in section.messages])
    return CountJob(text=section.text)


def _whole(body: bytes) -> CountJob:
    """The whole request (its system and messages) as the provider counts it."""
    parsed = json.loads(body)
    system = parsed.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
    return CountJob(messages=parsed.get("messages") or [], system=blocks or [])


def _shown(section: Section, count: tuple[int, str], message: Message) -> dict:
    shown = {"kind": section.kind, "label": section.label, "text": section.text,
             "tokens": count[0], "counted_by": count[1], "cached": section.cached,
             "start": section.start, "end": section.end, "offset": section.offset,
             "raw": section.raw}
    if section.messages is not None:
        shown["messages"] = section.messages
    if section.kind == "cortex":
        shown["revision"] = (message.cortex_revisions or {}).get(section.label)
    if section.kind == "world":
        shown["entries"] = [entry.model_dump(mode="json") for entry in message.world_info or ()]
    return shown
