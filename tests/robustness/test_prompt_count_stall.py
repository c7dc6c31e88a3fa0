"""Counting tokens for the prompt inspector never holds a gevent worker (issue 24): the app as it
runs in production (`python -m src.app`, one gevent worker, gevent's blocking monitor on), three
inspectors opened at once while Claude's count_tokens answers only after a second each (each
opening waits for its time budget, 8 s), and `/healthz` answers promptly all along; no report of
the event loop blocked inside the inspector's code."""
import time
from concurrent.futures import ThreadPoolExecutor, wait

from tests.chat.chat_support import SseStream
from tests.fakes.claude import FakeClaude, replies
from tests.robustness.servers import ServerProcess

KEY = "sk-ant-inspector-stall-0000000000"
CEILING_SECONDS = 2.0  # a held loop would hold /healthz for the whole counting (seconds)
INSPECTOR_FRAMES = ("services/prompt_", "services/token_counter.py", "services/json_spans.py",
                    "storage/prompt_records.py")


def test_slow_counting_does_not_hold_the_worker(data_dir, tmp_path):
    env = {"PERSONA_WORKERS": "1", "GEVENT_MONITOR_THREAD_ENABLE": "true",
           "GEVENT_MAX_BLOCKING_TIME": "0.5", "ANTHROPIC_API_KEY": KEY}
    with FakeClaude() as fake, ServerProcess(data_dir, tmp_path / "server.log",
                                             ANTHROPIC_BASE_URL=fake.url, **env) as server:
        fake.default = replies.text("Hello from the lighthouse.")
        persona = server.call("POST", "/api/personas", {"name": "Mira"})[2]
        session = server.call("POST", "/api/sessions", {"persona_id": persona["id"]})[2]
        with SseStream(server.url, "/api/chat/stream",
                       {"session_id": session["id"], "message": "Hello"}) as stream:
            done = stream.events()[-1]
        assert done[0] == "done", done
        path = f"/api/sessions/{session['id']}/messages/{done[1]['message_id']}/prompt"
        fake.count_delay = 1.0
        worst = 0.0
        with ThreadPoolExecutor(3) as pool:
            openings = [pool.submit(server.call, "GET", path, timeout=60) for _ in range(3)]
            while not all(opening.done() for opening in openings):
                began = time.monotonic()
                assert server.call("GET", "/healthz", timeout=30)[0] == 200
                worst = max(worst, time.monotonic() - began)
                wait(openings, timeout=0.1)
            results = [opening.result() for opening in openings]
        log = server.log()
    assert [status for status, _, _ in results] == [200, 200, 200]
    assert all(body["recorded"] for _, _, body in results)
    assert worst <= CEILING_SECONDS, f"/healthz took {worst:.2f} s while counting"
    stacks = [part.split("Info:")[0] for part in log.split("Blocked Stack")[1:]]
    held = [stack for stack in stacks if any(frame in stack for frame in INSPECTOR_FRAMES)]
    assert not held, held[0][:3000]
