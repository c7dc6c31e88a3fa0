"""The Claude fake for bench/crash_loop.py, in its own process (prints its URL, runs until stdin
closes).

Chat replies and titles are short texts. A cortex update "remembers" every `FACT-…` token in the
conversation it is given, one `insert` at the top of memory.md per fact, over two tool rounds
(half the facts each) with a pause before each answer, so a kill often lands mid-run. The model
is deliberately naive: it inserts every fact of its range, so re-processing a range that was
already applied duplicates facts. Every third distinct range fails after its first round with
HTTP 500 on all three attempts (the issue's "insert, then 500 x3"), once.

    .venv/bin/python bench/crash_fake.py
"""
import random
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from src.utils.services.chat_titles import TITLE_MAX_TOKENS
from tests.fakes.claude import FakeClaude, replies

FACT = re.compile(r"FACT-[0-9a-f]{12}")
FAILED_ATTEMPTS = 3


class UpdateModel:
    """Scripts the cortex update runs and chat replies (one instance serves all requests)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ranges: dict[tuple, int] = {}
        self._failing: dict[tuple, int] = {}
        self._rng = random.Random(7)

    def __call__(self, body: dict):
        if body.get("max_tokens") == TITLE_MAX_TOKENS:
            return replies.text("A title")
        if not body.get("tools"):
            return replies.text("Noted, thank you!", chunks=["Noted, ", "thank you!"])
        return self._update(body)

    def _update(self, body: dict):
        messages = body["messages"]
        facts = _facts(messages[0]["content"])
        key = tuple(facts)
        with self._lock:
            pause = self._rng.uniform(0.02, 0.25)
            if len(messages) == 1:
                self._ranges[key] = self._ranges.get(key, 0) + 1
                if len(self._ranges) % 3 == 0 and self._ranges[key] == 1 and facts:
                    self._failing[key] = FAILED_ATTEMPTS
            failing = len(messages) == 3 and self._failing.get(key, 0) > 0
            if failing:
                self._failing[key] -= 1
        time.sleep(pause)  # pacing: the run takes a while, so kills land inside it
        if failing:
            return replies.http_error(500, "api_error", "Internal server error",
                                      retry_after_ms=1)
        half = max(1, len(facts) // 2)
        batch = {1: facts[:half], 3: facts[half:]}.get(len(messages), [])
        if not batch:
            return replies.text("Remembered.")
        return replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                             "insert_text": f"- fact {fact}"})
                                 for fact in batch])


def _facts(content) -> list[str]:
    text = content if isinstance(content, str) else "".join(
        block.get("text", "") for block in content)
    if "<conversation>" not in text:  # a consolidation prompt: files only, nothing new to remember
        return []
    conversation = text.split("<conversation>", 1)[1].split("</conversation>", 1)[0]
    return list(dict.fromkeys(FACT.findall(conversation)))


def main() -> int:
    fake = FakeClaude()
    fake.default = replies.scripted(UpdateModel())
    print(fake.url, flush=True)
    try:
        sys.stdin.read()
    finally:
        fake.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
