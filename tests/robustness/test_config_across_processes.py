"""What a chat worker keeps of the configuration between turns (storage/generations.py) is
never older than the database: a persona renamed, a user persona edited or a world book entry
changed by another process (here: this test's own app on the same data directory, and a raw
SQLite connection) is in the very next request the production server (`python -m src.app`,
gunicorn, a gevent worker, its memory process) sends upstream."""
import sqlite3
from contextlib import closing

from tests.chat.chat_support import ChatSocketClient, chat_requests, lighthouse_world, ok
from tests.robustness.servers import ServerProcess, serving


def _system(request) -> str:
    return "\n".join(block["text"] for block in request.system)


def test_the_next_turn_in_a_worker_uses_what_another_process_changed(client, claude, script,
                                                                     server_env, data_dir,
                                                                     tmp_path):
    world = lighthouse_world(client)
    persona, user, entry, session = (world[k] for k in ("persona", "user", "entry", "session"))
    server = ServerProcess(data_dir, tmp_path / "server.log", **server_env)
    with serving(server), ChatSocketClient(server.ws_url) as ws:
        ws.chat(session, "Is the lighthouse lit?")
        ws.chat(session, "Still?")  # the worker has kept what it read
        ok(client.put(f"/api/personas/{persona}", json={"name": "Nora"}))
        ok(client.patch(f"/api/user-personas/{user}", json={"description": "Sam rows."}))
        ws.chat(session, "And the lighthouse?")
        with closing(sqlite3.connect(data_dir / "app.db")) as other:
            other.execute("UPDATE world_entries SET data = json_set(data, '$.content', "
                          "'The lighthouse is green.') WHERE id = ?", (entry,))
            other.commit()
        ws.chat(session, "Is the lighthouse lit now?")
    first, second, third, fourth = (_system(request) for request in chat_requests(claude))
    assert first.startswith("You are Mira") and second.startswith("You are Mira")
    assert "Sam sails." in first and "The lighthouse is red." in first
    assert third.startswith("You are Nora") and "Sam rows." in third
    assert "The lighthouse is red." in third
    assert "The lighthouse is green." in fourth and "You are Nora" in fourth
