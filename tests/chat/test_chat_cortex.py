"""Chat and the cortex: `done` carries the progress, the threshold queues an update, and the
WebSocket hears when the background update finished (only for the personas it follows)."""
import pytest

from src.utils import provider
from tests.chat.chat_support import (
    BOTH_PROVIDERS,
    ChatSocketClient,
    Script,
    chat_requests,
    live_config,
)
from tests.fakes.claude import replies


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, CORTEX_WORKER=True)


@pytest.fixture
def script(claude, app):
    provider.get_settings_service(app).update({"context_limit": 8})
    provider.get_memory_settings(app).update_cortex({"frequency": "frequent"})
    return Script(claude)


@BOTH_PROVIDERS
def test_threshold_triggers_an_update_and_the_socket_hears_it_finish(
        server, app, claude, script, make_persona, make_session):
    other = make_persona("Basil")
    session = make_session()
    script.update(replies.tool_use([("insert", {"filename": "memory.md", "insert_line": 0,
                                                "insert_text": "- Lena paddles on the Elbe."})]),
                  replies.text("Remembered the paddling."))
    with ChatSocketClient(server.ws_url) as bystander:
        bystander.send(type="subscribe", persona_id=other["id"])
        assert bystander.next() == {"type": "subscribed", "persona_id": other["id"]}
        ws = ChatSocketClient(server.ws_url)
        first = ws.chat(session["id"], "I went kayaking today.")[-1]
        assert first["cortex"]["triggered"] is False
        assert first["cortex"]["progress"] == 0.5
        assert first["cortex"]["frequency"] == "frequent"
        second = ws.chat(session["id"], "On the Elbe, near Dresden.")[-1]
        assert second["cortex"]["triggered"] is True
        job_id = second["cortex"]["job_id"]
        finished = ws.first("cortex")
        assert ws.chat(session["id"], "What do you remember?")[-1]["type"] == "done"
        ws.close()
        bystander.send(type="subscribe", persona_id=other["id"])
        assert bystander.receive()["type"] == "subscribed", "another persona's news leaked"
    assert finished == {"type": "cortex", "job_id": job_id, "persona_id": "default",
                        "status": "done", "files": ["memory.md"], "error": None,
                        "reason": "threshold"}
    memory = provider.get_cortex_service(app).read_file("default", "memory.md")
    assert memory.startswith("- Lena paddles on the Elbe.\n")
    update = next(r for r in claude.requests if r.tools)
    assert "On the Elbe, near Dresden." in str(update.messages)
    assert "Lena paddles on the Elbe." in str(chat_requests(claude)[-1].system)  # the next prompt
