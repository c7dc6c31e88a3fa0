"""A hostile lorebook does not stall a gevent worker (DESIGN §16, docs/world-info.md): the app
as it runs in production (`python -m src.app`, one gevent worker) under gevent's blocking
monitor, a card from the internet whose book has hundreds of entries of 64 keys with
punctuation (`.`: each candidate in the text needs a look at its neighbours) and a message full
of them. The scan runs on the event loop at every turn; before its work was bounded it spent
seconds of CPU there (minutes with the largest books and a deep scan), now the server's stop
finds no block over BLOCK_SECONDS (servers.py) and the one real entry still fires."""
import json

from tests.chat.chat_support import SseStream, chat_requests
from tests.fakes.claude import FakeClaude, replies
from tests.robustness.hostile_uploads import upload
from tests.robustness.servers import ServerProcess

KEY = "sk-ant-world-stall-test-0000000000"


def _hostile_card() -> bytes:
    """A V2 card whose book holds 200 entries of 64 keys each that never match whole (`.` in
    text where every `.` follows a letter), behind one real entry with a lower priority."""
    noise = [{"keys": ["."] * 64, "content": f"noise {i}", "insertion_order": 200 + i}
             for i in range(200)]
    real = {"keys": ["lantern"], "content": "The lantern never goes out.",
            "insertion_order": 1}
    book = {"name": "Hostile", "scan_depth": 4, "entries": [*noise, real]}
    card = {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "Mira", "description": "A guide.", "character_book": book}}
    return json.dumps(card).encode()


def test_a_hostile_book_never_blocks_the_event_loop(tmp_path):
    with FakeClaude() as fake:
        fake.default = replies.text("Noted.")
        env = {"PERSONA_WORKERS": "1", "ANTHROPIC_API_KEY": KEY,
               "ANTHROPIC_BASE_URL": fake.url}
        with ServerProcess(tmp_path / "data", tmp_path / "server.log", **env) as server:
            status, persona = upload(server.port, "/api/personas/import", _hostile_card())
            assert status == 201, persona
            session = server.call("POST", "/api/sessions", {"persona_id": persona["id"]})[2]
            message = "a." * 4000 + " Where is the lantern?"
            with SseStream(server.url, "/api/chat/stream",
                           {"session_id": session["id"], "message": message}) as stream:
                events = list(iter(stream.next_event, None))
            assert events[-1][0] == "done", events[-1]
        system = chat_requests(fake)[-1].body["system"]
        assert "The lantern never goes out." in json.dumps(system)
