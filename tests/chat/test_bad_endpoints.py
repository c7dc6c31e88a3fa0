"""Bad OpenAI-compatible endpoints through the chat route: a clear error event, no hang, never
a 5xx, and the person's message kept (issue 13)."""
import json

import pytest

from tests.chat.chat_support import live_config
from tests.fakes.openai_compat import replies


@pytest.fixture
def app_config(app_config, openai_fake):
    return live_config(app_config, openai_fake, ANTHROPIC_TIMEOUT=3.0)


def chat(client, text="Are you there?") -> tuple[int, list[tuple[str, dict]]]:
    session = client.post("/api/sessions", json={"persona_id": "default"}).get_json()
    response = client.post("/api/chat/stream", json={"session_id": session["id"], "message": text})
    events, kind = [], None
    for line in response.get_data(as_text=True).splitlines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: ") and kind:
            events.append((kind, json.loads(line[6:])))
    return response.status_code, events


@pytest.mark.parametrize("setup, message_part", [
    pytest.param(lambda fake, client: client.put("/api/settings", json={
        "base_url": "http://127.0.0.1:9/v1"}), "could not be reached", id="unreachable"),
    pytest.param(lambda fake, client: fake.quirks.add("html"), "/v1", id="html-200"),
    pytest.param(lambda fake, client: fake.quirks.add("garbage_lines"), "not JSON",
                 id="non-json-lines"),
    pytest.param(lambda fake, client: fake.quirks.add("endless"), "cut off", id="endless"),
    pytest.param(lambda fake, client: fake.quirks.add("huge"), "cut off", id="20-mb"),
    pytest.param(lambda fake, client: fake.enqueue(replies.hang(after_headers=True)),
                 "too long", id="silent-stream"),
    pytest.param(lambda fake, client: client.put("/api/settings", json={"model": "nope:1b"}),
                 "does not know this model", id="unknown-model"),
])
def test_a_bad_endpoint_is_a_clear_error_and_the_message_is_kept(client, openai_fake, rows,
                                                                 setup, message_part):
    openai_fake.default = replies.text("Hello", chunks=["Hel", "lo"])
    setup(openai_fake, client)
    status, events = chat(client)
    assert status == 200
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "error"
    assert message_part in events[-1][1]["message"]
    assert rows("SELECT content FROM messages WHERE role = 'user'") == [
        {"content": "Are you there?"}]


def test_memory_larger_than_the_window_is_context_too_small(client, openai_fake):
    client.put("/api/settings", json={"context_window": 4096, "max_tokens": 1024})
    openai_fake.default = replies.text("Fits.")
    assert chat(client)[1][-1][0] == "done"
    cortex = client.get("/api/personas/default/cortex/memory.md")
    saved = client.put("/api/personas/default/cortex/memory.md",
                       json={"content": "- a fact about the person\n" * 300},
                       headers={"If-Match": cortex.headers["ETag"]})
    assert saved.status_code == 200, saved.get_json()
    status, events = chat(client)
    error = events[-1][1]
    assert status == 200 and error["code"] == "context_too_small"
    assert "4096" in error["message"] and len([r for r in openai_fake.requests if r.stream]) == 1
