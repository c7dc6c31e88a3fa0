"""Counting tokens for the prompt inspector never holds a gevent worker (issue 24): the app as it
runs in production (`python -m src.app`, one gevent worker, gevent's blocking monitor on), three
inspectors opened at once while Claude's count_tokens holds their counts (a gate the test opens),
and `/healthz` is answered meanwhile. A held loop could answer it only once a count had timed
out (`CALL_SECONDS`) and fallen back to an estimate, so the held counts being the provider's is
the proof; no duration is asserted. Also no report of the event loop blocked inside the
inspector's code."""
import threading
from concurrent.futures import ThreadPoolExecutor

from tests.chat.chat_support import SseStream
from tests.fakes.claude import FakeClaude, replies
from tests.robustness.servers import ServerProcess
from tests.support.flocks import wait_until

KEY = "sk-ant-inspector-stall-0000000000"
DEADLINE = 30.0  # only bounds a failure: a held loop answers /healthz only once counts go on
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
        gate = threading.Event()
        fake.count_gate = gate
        try:
            with ThreadPoolExecutor(3) as pool:
                openings = [pool.submit(server.call, "GET", path, timeout=60) for _ in range(3)]
                wait_until(lambda: _counts(fake) >= 3, what="three counts held at the fake")
                assert server.call("GET", "/healthz", timeout=DEADLINE)[0] == 200
                gate.set()
                results = [opening.result() for opening in openings]
        finally:
            gate.set()
        log = server.log()
    assert [status for status, _, _ in results] == [200, 200, 200]
    assert all(body["recorded"] for _, _, body in results)
    # Each opening's held count (its first section) is the provider's: none had timed out into
    # an estimate by the time /healthz was answered, so the worker answered while they waited.
    # (Later sections may run out of the opening's budget on a loaded machine; that is allowed.)
    assert [body["sections"][0]["counted_by"] for _, _, body in results] == ["provider"] * 3
    stacks = [part.split("Info:")[0] for part in log.split("Blocked Stack")[1:]]
    blocked = [stack for stack in stacks if any(frame in stack for frame in INSPECTOR_FRAMES)]
    assert not blocked, blocked[0][:3000]


def _counts(fake: FakeClaude) -> int:
    return sum(1 for r in fake.requests if r.path.endswith("/count_tokens"))
