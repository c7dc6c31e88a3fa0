"""Token usage the fake reports: about len(prompt JSON) / 4, plus a simple prompt-cache model.

The cache works like the API's in miniature: the prompt (tools, system, messages) up to the last
`cache_control` breakpoint (or all of it with top-level `cache_control`) is written on first use;
a later request of the same model starting with a written prefix reads that part instead.
There is no minimum cacheable length and no expiry.
"""
import threading

from tests.fakes.sse import dumps


def _items(body: dict) -> list[dict]:
    """The prompt in cache order (tools, system, messages) as blocks."""
    items = [tool for tool in body.get("tools") or [] if isinstance(tool, dict)]
    system = body.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
    items += [block for block in blocks if isinstance(block, dict)]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        items += [dict(block, role=message.get("role")) for block in blocks
                  if isinstance(block, dict)]
    return items


def _tokens(texts) -> int:
    return max(1, sum(len(text) for text in texts) // 4)


def count_tokens(body: object) -> int:
    """The input tokens of a request body (never 0)."""
    items = _items(body) if isinstance(body, dict) else []
    return _tokens(dumps(item) for item in items) + 3


class PromptCache:
    """Remembers written prefixes, so usage shows cache writes, then cache reads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._written: list[tuple] = []

    def usage(self, body: object) -> dict:
        """input_tokens / cache_creation_input_tokens / cache_read_input_tokens for a request."""
        body = body if isinstance(body, dict) else {}
        items = _items(body)
        total = count_tokens(body)
        usage = {"input_tokens": total, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        marks = [i for i, item in enumerate(items) if item.get("cache_control")]
        if body.get("cache_control") and items:
            marks.append(len(items) - 1)
        if not marks:
            return usage
        prefix = (body.get("model"), *(dumps(item) for item in items[:max(marks) + 1]))
        with self._lock:
            hit = max((len(p) for p in self._written if prefix[:len(p)] == p), default=0)
            self._written.append(prefix)
        read = _tokens(prefix[1:hit]) if hit else 0
        created = _tokens(prefix[1:]) - read
        usage.update(input_tokens=max(1, total - read - created),
                     cache_creation_input_tokens=created, cache_read_input_tokens=read)
        return usage
