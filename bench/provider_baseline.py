"""The bare-SDK baseline in its own process, for bench/ttft_providers.py.

    python bench/provider_baseline.py anthropic|openai_compatible BASE_URL

Reads lines `N BODY_PATH` from stdin: starts N streams at once (behind a barrier) sending the
request in BODY_PATH with the provider's own SDK, and prints their times to the first text
chunk (seconds, JSON list). Each stream is read to the end, as the app reads it.
"""
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anthropic
import openai

KEY = "sk-bench-0000000000000000"


def anthropic_ttft(sdk, body: dict) -> float:
    start, first = time.perf_counter(), None
    with sdk.messages.create(stream=True, model=body["model"], max_tokens=body["max_tokens"],
                             system=body["system"], messages=body["messages"]) as stream:
        for event in stream:
            if first is None and event.type == "content_block_delta" \
                    and event.delta.type == "text_delta":
                first = time.perf_counter()
    return first - start


def openai_ttft(sdk, body: dict) -> float:
    start, first = time.perf_counter(), None
    kwargs = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    stream = sdk.chat.completions.create(stream=True, stream_options={"include_usage": True},
                                         **kwargs)
    with stream:
        for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter()
    return first - start


def main() -> None:
    kind, url = sys.argv[1], sys.argv[2]
    if kind == "openai_compatible":
        sdk, run = openai.OpenAI(api_key=KEY, base_url=url, max_retries=0, timeout=60), openai_ttft
    else:
        sdk, run = anthropic.Anthropic(api_key=KEY, base_url=url, max_retries=0,
                                       timeout=60), anthropic_ttft
    with sdk, ThreadPoolExecutor(64) as pool:
        for line in sys.stdin:
            count, path = line.split()
            with open(path, encoding="utf-8") as fh:
                body = json.load(fh)
            barrier = threading.Barrier(int(count))

            def go(_, barrier=barrier, body=body):
                barrier.wait()
                return run(sdk, body)
            print(json.dumps(list(pool.map(go, range(int(count))))), flush=True)


if __name__ == "__main__":
    main()
