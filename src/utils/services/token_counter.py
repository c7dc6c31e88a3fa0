"""Token counts for the prompt inspector: the provider's where it counts, else a labelled estimate.

Anthropic counts through the SDK (`messages.count_tokens`, `ApiClient.count_tokens`); an
OpenAI-compatible endpoint has no counting API, so its counts are the app's documented estimate
(UTF-8 bytes / 3, rounded up, docs/models.md). A section is counted as its text sent alone as one
user message, less the overhead of a message (the count of a one-character message, less one);
the history as its messages, less the same overhead. Provider counts are kept in SQLite by a hash
of provider, model and content, so reopening the inspector asks nothing. All counting of one
opening shares one time budget (`BUDGET_SECONDS`); once the provider fails or the budget is
spent, the rest is estimated and labelled so. The requests are network I/O through the SDK,
which gevent's patched sockets turn into waits that never hold a worker's event loop.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..api_request import ApiClient
from ..api_request.context_window import PER_MESSAGE, estimate
from ..storage import Database, prompt_records

BUDGET_SECONDS = 8.0
CALL_SECONDS = 5.0
PROVIDER, ESTIMATE = "provider", "estimate"


@dataclass(frozen=True)
class CountJob:
    """One thing to count: a text, a list of messages, or a whole request (system + messages)."""

    text: str | None = None
    messages: list[dict] | None = None
    system: list[dict] | None = None

    def key(self, provider: str, model: str) -> str:
        """The cache key of this count."""
        content = json.dumps([self.text, self.messages, self.system], ensure_ascii=False)
        return hashlib.sha256(f"{provider}\0{model}\0{content}".encode("utf-8", "replace")
                              ).hexdigest()

    def estimate(self) -> int:
        """The documented estimate."""
        if self.text is not None:
            return estimate(self.text)
        total = sum(estimate(_text_of(m.get("content"))) + PER_MESSAGE
                    for m in self.messages or ())
        return total + sum(estimate(block.get("text") or "") for block in self.system or ())


def _text_of(content: str | list[Any] | None) -> str:
    if isinstance(content, str):
        return content
    return "\n\n".join(block.get("text") or "" for block in content or ()
                       if isinstance(block, dict))


_OVERHEAD = CountJob(messages=[{"role": "user", "content": "."}])


class TokenCounter:
    """Counts jobs for one provider and model within the time budget."""

    def __init__(self, db: Database, api_client: ApiClient, budget: float = BUDGET_SECONDS):
        self._db = db
        self._api = api_client
        self._budget = budget

    def count(self, provider: str, model: str, jobs: list[CountJob]) -> list[tuple[int, str]]:
        """`(tokens, counted_by)` for each job, in order."""
        if provider == "openai_compatible" or not jobs:
            return [(job.estimate(), ESTIMATE) for job in jobs]
        session = _Session(self._api, model, time.monotonic() + self._budget)
        keys = [job.key(provider, model) for job in [_OVERHEAD, *jobs]]
        known = prompt_records.cached_counts(self._db.conn(), keys)
        raw = [known.get(key) for key in keys]
        for index, job in enumerate([_OVERHEAD, *jobs]):
            blank = job.text is not None and not job.text.strip()  # the API refuses those
            if raw[index] is None and not blank and (index == 0 or raw[0] is not None):
                raw[index] = session.count(job)
        fresh = {key: n for key, n in zip(keys, raw, strict=True)
                 if n is not None and key not in known}
        prompt_records.store_counts(self._db.conn(), fresh)
        overhead = raw[0]
        out = []
        for job, value in zip(jobs, raw[1:], strict=True):
            if value is None or overhead is None:
                out.append((job.estimate(), ESTIMATE))
            elif job.system is not None:
                out.append((value, PROVIDER))  # a whole request: as the provider counts it
            else:
                out.append((max(0, value - overhead + 1), PROVIDER))
        return out


class _Session:
    """The provider calls of one opening: stops at the first failure or when time is up."""

    def __init__(self, api_client: ApiClient, model: str, deadline: float):
        self._api, self._model, self._deadline = api_client, model, deadline
        self._failed = False

    def count(self, job: CountJob) -> int | None:
        left = self._deadline - time.monotonic()
        if self._failed or left <= 0.05:
            return None
        messages = job.messages or [{"role": "user", "content": job.text or ""}]
        counted = self._api.count_tokens(self._model, messages, job.system,
                                         timeout=min(CALL_SECONDS, left))
        self._failed = counted is None or time.monotonic() > self._deadline
        return counted
