"""Deleting a session stops its reply (issue 21): the upstream request is closed, not paid for
to the end of a conversation nobody can read any more."""
import http.client
import json
import threading
import time
from contextlib import closing
from urllib.parse import urlsplit

import pytest

from tests.chat.chat_support import SseStream, eventually, live_config
from tests.fakes.claude import replies

WORDS = [f"w{i} " for i in range(12)]
STOP_DEADLINE = 5.0  # generous: the sync thread notices a deleted reply within 0.25 s


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude)


def _delete(url: str, path: str) -> tuple[int, dict]:
    parts = urlsplit(url)
    with closing(http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)) as conn:
        conn.request("DELETE", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read())


def test_deleting_a_session_while_its_reply_streams_closes_the_upstream_request(
        server, claude, script, make_session, rows):
    sid = make_session()["id"]
    gate = threading.Event()  # never set: the fake holds the stream until the client leaves
    script.reply(replies.gated(replies.text("".join(WORDS), chunks=WORDS), gate))
    with SseStream(server.url, "/api/chat/stream", {"session_id": sid, "message": "Go"}) as sse:
        assert sse.next_event()[0] == "start"
        assert sse.next_event() == ("chunk", {"text": "w0 "})
        asked = time.monotonic()
        assert _delete(server.url, f"/api/sessions/{sid}") == (200, {"id": sid, "deleted": True})
        assert claude.wait_for_disconnect(timeout=STOP_DEADLINE)
        print(f"\nupstream closed {time.monotonic() - asked:.3f} s after the delete")
        final = sse.events()[-1]
    assert final[0] == "done" and final[1]["stop_reason"] == "cancelled", final
    assert not gate.is_set() and len(claude.requests) == 1
    eventually(lambda: rows("SELECT id FROM messages WHERE session_id = ?", sid) == [])
