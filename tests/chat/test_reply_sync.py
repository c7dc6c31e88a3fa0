"""When a reply's row gets its growing text (generations.py): every sync for a reply something
outside the generating process follows (a page showing it, a follower tailing the row), and only
at the checkpoint for the others, so a turn nobody else watches writes its row twice, not four
times a second. The checkpoint here is an hour, so any mid-stream write comes from a mark."""
import threading

import pytest

from tests.chat.chat_support import ChatSocketClient, eventually, live_config
from tests.fakes.claude import replies

WORDS = [f"w{i} " for i in range(6)]


@pytest.fixture
def app_config(app_config, claude):
    return live_config(app_config, claude, REPLY_CHECKPOINT_SECONDS=3600.0)


def _reply(rows, sid: str) -> dict:
    return rows("SELECT content, streaming, stop_reason FROM messages WHERE session_id = ? AND "
                "role = 'assistant'", sid)[0]


def test_only_the_reply_a_page_shows_gets_its_text_written_while_streaming(
        server, client, script, make_session, rows):
    gates = [threading.Event(), threading.Event()]
    script.reply(*(replies.gated(replies.text("".join(WORDS), chunks=WORDS), g) for g in gates))
    watched, unwatched = make_session()["id"], make_session()["id"]
    with ChatSocketClient(server.ws_url) as one, ChatSocketClient(server.ws_url) as two:
        one.send(type="chat", session_id=unwatched, message="Go")
        assert one.until("chunk")[-1]["text"] == "w0 "
        two.send(type="chat", session_id=watched, message="Go")
        assert two.until("chunk")[-1]["text"] == "w0 "
        client.get(f"/api/sessions/{watched}")  # a page shows it: its process keeps it current
        eventually(lambda: _reply(rows, watched)["content"] == "w0 ")
        # the same sync pass saw the other reply, with text since before the mark
        assert _reply(rows, unwatched) == {"content": "", "streaming": 1, "stop_reason": None}
        shown = client.get(f"/api/sessions/{watched}").get_json()["messages"][-1]
        assert (shown["status"], shown["stop_reason"], shown["content"]) == (
            "streaming", None, "w0 ")  # the mark between processes is not an end
        for gate in gates:
            gate.set()
        assert one.until("done")[-1]["text"] == two.until("done")[-1]["text"] == "".join(WORDS)
    for sid in (watched, unwatched):
        assert _reply(rows, sid) == {"content": "".join(WORDS), "streaming": 0,
                                     "stop_reason": "end_turn"}
