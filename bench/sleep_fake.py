"""The Claude fake for bench/sleep_consolidation.py, in its own process (prints its URL, runs
until stdin closes, then prints one JSON line: every request's kind and reported usage).

The scripted model is deterministic and naive on purpose, like a verbose real one:
- an update inserts one dated line per `FACT:` sentence of its conversation under "## Facts"
  (facts repeat across sessions, so memory.md fills with near-duplicates);
- a consolidation rewrites each file it can shrink by a tenth: pinned blocks kept byte for byte,
  duplicate facts merged (the newest date kept), and facts older than the newest 25 folded into
  one summary line. It answers with one write_file per file, then a one-line summary.

    .venv/bin/python bench/sleep_fake.py
"""
import json
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.claude import FakeClaude, replies
from tests.fakes.usage import _items, _tokens

FACT = re.compile(r"FACT: ([^.\n]+)\.")
FILE = re.compile(r'<cortex_file name="([a-z.]+)"([^>]*)>\n(.*?)</cortex_file>', re.DOTALL)
LINE = re.compile(r"^- On (\d{4}-\d{2}-\d{2}) (.+)$")
PIN = re.compile(r"<!-- pin -->.*?<!-- /pin -->\n?", re.DOTALL)
KEEP = 25


class SleepModel:
    """Answers updates, consolidations and chat titles; records what it was asked."""

    def __init__(self):
        self.log: list[dict] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict):
        kind = _kind(body)
        with self._lock:
            self.log.append({"kind": kind, "input_chars": sum(len(json.dumps(i))
                                                              for i in _items(body)),
                             "tokens": _tokens(json.dumps(i) for i in _items(body))})
        if body["messages"][-1]["role"] == "user" and any(
                b.get("type") == "tool_result" for b in body["messages"][-1]["content"]
                if isinstance(b, dict)):
            return replies.text("Done.")
        prompt = "".join(b.get("text", "") for b in body["messages"][0]["content"])
        if kind == "consolidate":
            return _consolidate(prompt)
        if kind == "update":
            return _update(prompt)
        return replies.text("Fine.")


def _kind(body: dict) -> str:
    system = body.get("system")
    text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system or [])
    if not body.get("tools"):
        return "chat"
    return "consolidate" if "consolidate your cortex" in text else "update"


def _update(prompt: str):
    date = re.findall(r"\[(\d{4}-\d{2}-\d{2}) ", prompt)
    facts = FACT.findall(prompt.split("<conversation>", 1)[-1])
    if not facts:
        return replies.text("Nothing new.")
    lines = "".join(f"- On {date[-1] if date else '2025-01-01'} Jonas said {fact}.\n"
                    for fact in facts)
    return replies.tool_use([("str_replace", {"filename": "memory.md", "old_str": "## Facts\n",
                                              "new_str": "## Facts\n" + lines})])


def _consolidate(prompt: str):
    calls = []
    for name, _attributes, body in FILE.findall(prompt):
        concise = _concise(body)
        if len(concise) < 0.9 * len(body):
            calls.append(("write_file", {"filename": name, "content": concise}))
    return replies.tool_use(calls) if calls else replies.text("Nothing to consolidate.")


def _concise(text: str) -> str:
    pins = PIN.findall(text)
    rest = PIN.sub(lambda m: f"\x00{pins.index(m.group(0))}\n", text)
    newest: dict[str, str] = {}
    out, facts_at = [], None
    for line in rest.splitlines():
        match = LINE.match(line)
        if match:
            newest[match.group(2)] = max(newest.get(match.group(2), ""), match.group(1))
            facts_at = len(out) if facts_at is None else facts_at
            continue
        out.append(line)
    ordered = sorted(newest.items(), key=lambda item: item[1])
    old, recent = ordered[:-KEEP], ordered[-KEEP:]
    block = ([f"- Before {recent[0][1]}: {len(old)} older remarks (see the archive)."]
             if old else []) + [f"- On {day} {fact}" for fact, day in recent]
    index = facts_at if facts_at is not None else len(out)
    out[index:index] = block
    result = "\n".join(out).strip("\n") + "\n"
    for index, pin in enumerate(pins):
        result = result.replace(f"\x00{index}\n", pin, 1)
    return result


def main() -> int:
    model = SleepModel()
    fake = FakeClaude()
    fake.default = replies.scripted(model)
    print(fake.url, flush=True)
    try:
        sys.stdin.read()
    finally:
        fake.close()
        print(json.dumps(model.log), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
