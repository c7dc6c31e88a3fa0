"""The faults the Claude fake can inject, what the app must report for each, and a scripted
upstream that picks the fault from the request itself (so concurrent clients never race for a
FIFO queue)."""
import json
import re
import threading

from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.fakes.claude import replies

REPLY = "All good: here is a full answer in several chunks."
_CHUNKS = ["All good: ", "here is a full ", "answer in ", "several chunks."]

# fault -> (reply the fake serves to a chat request, expected final event, expected error code)
CHAT_FAULTS = {
    "ok": (lambda: replies.text(REPLY, chunks=_CHUNKS), "done", None),
    "http401": (lambda: replies.http_error(401, "authentication_error", "invalid x-api-key"),
                "error", "authentication_failed"),
    "http429": (lambda: replies.http_error(429, "rate_limit_error", "Rate limited"),
                "error", "rate_limited"),
    "http500": (lambda: replies.http_error(500, "api_error", "Internal server error"),
                "error", "api_error"),
    "http529": (lambda: replies.http_error(529, "overloaded_error", "Overloaded"),
                "error", "overloaded"),
    "timeout": (lambda: replies.hang(), "error", "timeout"),
    "stall": (lambda: replies.hang(after_headers=True), "error", "timeout"),
    "drop": (lambda: replies.drop(after_events=4, base=replies.text(REPLY, chunks=_CHUNKS)),
             "error", "connection_error"),
    "midstream": (lambda: replies.stream_error("overloaded_error", "Overloaded", after_events=4,
                                               base=replies.text(REPLY, chunks=_CHUNKS)),
                  "error", "overloaded"),
    "unfinished": (lambda: replies.unfinished(base=replies.text(REPLY, chunks=_CHUNKS)),
                   "error", "connection_error"),
}

# fault -> (reply to a cortex update's first request, expected job status, expected job error)
UPDATE_FAULTS = {
    "ok": (None, "done", None),
    "http401": (lambda: replies.http_error(401, "authentication_error", "invalid x-api-key"),
                "failed", "authentication_failed"),
    "http429": (lambda: replies.http_error(429, "rate_limit_error", "Rate limited"),
                "failed", "rate_limited"),
    "http500": (lambda: replies.http_error(500, "api_error", "Internal server error"),
                "failed", "api_error"),
    "http529": (lambda: replies.http_error(529, "overloaded_error", "Overloaded"),
                "failed", "overloaded"),
    "timeout": (lambda: replies.hang(), "failed", "timeout"),
    "drop": (lambda: replies.drop(), "failed", "connection_error"),
}

_CHAT_MARK = re.compile(r"\[fault=(\w+)\]")
_JOB_MARK = re.compile(r"job-(\d+) fault=(\w+)")


def chat_message(fault: str, who: str, n: int) -> str:
    """A user message that asks the scripted upstream for `fault`."""
    return f"[fault={fault}] message {n} from {who}"


def job_message(index: int, fault: str) -> str:
    """A message whose cortex update should meet `fault` (the newest marker wins)."""
    return f"Remember this: job-{index} fault={fault}"


class FaultyUpstream:
    """Answers the fake's requests: chat replies by the fault in the last user message, cortex
    updates by the newest job marker in their conversation, titles always."""

    def __init__(self, claude):
        self.served: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        claude.default = replies.scripted(self._answer)

    def _answer(self, body: dict):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("A title")
        if body.get("tools"):
            return self._update(body)
        last = body["messages"][-1]["content"]
        text = last if isinstance(last, str) else json.dumps(last)
        marks = _CHAT_MARK.findall(text)
        fault = marks[-1] if marks else "ok"
        self._record("chat", fault)
        return CHAT_FAULTS[fault][0]()

    def _update(self, body: dict):
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
            return replies.text("I noted what matters.")
        marks = _JOB_MARK.findall(json.dumps(body, ensure_ascii=False))
        index, fault = max(((int(i), f) for i, f in marks), default=(-1, "ok"))
        self._record("update", fault)
        if fault == "ok":
            return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                 "insert_text": f"- fact from job {index}\n"})])
        return UPDATE_FAULTS[fault][0]()

    def _record(self, kind: str, fault: str) -> None:
        with self._lock:
            self.served.append((kind, fault))
