"""The Claude fake for bench/reconcile_cost.py, in its own process (prints its URL, appends one
JSON line per request to the log file it is given, runs until stdin closes).

The scripted model is deterministic:
- an update inserts one line per `FACT: …` sentence of its conversation under "## Facts";
- a reconciliation removes the line of each `FACT: …` sentence among the retracted messages
  (one str_replace each), leaving everything else (the person's own lines) as it is;
- a chat reply answers "Tell me more!".
A request that carries tool results is answered with a one-line summary.

    .venv/bin/python bench/reconcile_fake.py <log.jsonl>
"""
import json
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.claude import FakeClaude, replies
from tests.fakes.usage import count_tokens

FACT = re.compile(r"FACT: ([^.\n]+)\.")
MARK = "<cortex_retracted>"


class ReconcileModel:
    """Answers chat, updates and reconciliations; logs each request's kind and input tokens."""

    def __init__(self, log_path: str):
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115  (closed in close())
        self._lock = threading.Lock()

    def close(self) -> None:
        self._log.close()

    def __call__(self, body: dict):
        prompt = "".join(b.get("text", "") for b in body["messages"][0]["content"]) \
            if isinstance(body["messages"][0]["content"], list) else body["messages"][0]["content"]
        kind = "chat" if not body.get("tools") else ("reconcile" if MARK in prompt else "update")
        reply, written = self._reply(kind, prompt, body)
        with self._lock:
            self._log.write(json.dumps({"kind": kind, "input_tokens": count_tokens(body),
                                        "output_tokens": max(1, written // 4)}) + "\n")
            self._log.flush()
        return reply

    @staticmethod
    def _reply(kind: str, prompt: str, body: dict):
        """The reply and how many characters the model wrote (text plus tool inputs)."""
        reply = ReconcileModel._answer(kind, prompt, body)
        if isinstance(reply, tuple):
            calls, _text = reply
            return replies.tool_use(calls), sum(len(json.dumps(args)) for _, args in calls)
        return replies.text(reply), len(reply)

    @staticmethod
    def _answer(kind: str, prompt: str, body: dict):
        """A text (str) or tool calls (`(calls, None)`)."""
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return "Done."
        if kind == "chat":
            return "Tell me more!"
        if kind == "reconcile":
            retracted = prompt.split(MARK, 1)[1]
            calls = [("str_replace", {"filename": "memory.md", "old_str": f"- {fact}\n",
                                      "new_str": ""})
                     for fact in dict.fromkeys(FACT.findall(retracted)) if f"- {fact}\n" in prompt]
            return (calls, None) if calls else "Nothing came from them."
        facts = FACT.findall(prompt.split("<conversation>", 1)[-1])
        if not facts:
            return "Nothing new."
        lines = "".join(f"- {fact}\n" for fact in facts)
        return ([("str_replace", {"filename": "memory.md", "old_str": "## Facts\n",
                                  "new_str": "## Facts\n" + lines})], None)


def main(log_path: str) -> int:
    model = ReconcileModel(log_path)
    fake = FakeClaude()
    fake.default = replies.scripted(model)
    print(fake.url, flush=True)
    try:
        sys.stdin.read()
    finally:
        fake.close()
        model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
