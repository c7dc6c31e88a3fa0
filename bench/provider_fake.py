"""A paced fake upstream in its own process, for bench/ttft_providers.py.

    python bench/provider_fake.py anthropic|openai_compatible EVENT_DELAY

Prints its base URL on the first line, then serves until stdin closes. A line `dump PATH` on
stdin writes the last streamed chat request body (JSON) to PATH, so the bare-SDK baseline can
send exactly what the app sent.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.claude import FakeClaude, replies
from tests.fakes.openai_compat import FakeOpenAI

TEXT = "Hello! It is good to see you again. How was the trip to the mountains last weekend?"


def main() -> None:
    kind, delay = sys.argv[1], float(sys.argv[2])
    fake = FakeOpenAI(validate=False) if kind == "openai_compatible" else FakeClaude()
    if kind == "openai_compatible":
        fake.models.append("claude-sonnet-5-5")
    fake.default = replies.text(TEXT, event_delay=delay)
    print(fake.url, flush=True)
    with fake:
        for line in sys.stdin:
            if line.startswith("dump "):
                bodies = [r.body for r in fake.requests if r.stream and not r.body.get("tools")]
                Path(line[5:].strip()).write_text(json.dumps(bodies[-1] if bodies else None))
                print("ok", flush=True)
            fake._requests.clear() if len(fake.requests) > 10_000 else None


if __name__ == "__main__":
    main()
