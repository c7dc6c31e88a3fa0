"""A huge chat import does not stall a gevent worker (DESIGN §16): the app as it runs in
production (`python -m src.app`, one gevent worker) with gevent's blocking monitor on, a
chat of 50,000 messages previewed and imported, and no report of the event loop blocked inside
the import's code (parsing runs in the thread pool, the insert yields every few hundred rows).
Start-up and other code may block briefly on a loaded machine; only the import's frames count."""
import http.client
import io
import json
import time
from contextlib import closing

from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

from src.utils.limits import CHAT_IMPORT
from tests.robustness.servers import ServerProcess

IMPORT_FRAMES = ("portability/chats.py", "portability/chat_dates.py", "storage/imports.py",
                 "portability/chat_import.py")


def _huge_chat() -> bytes:
    header = {"user_name": "Robin", "character_name": "Seraphina",
              "create_date": "2024-06-06@15h14m02s", "chat_metadata": {}}
    lines = [json.dumps(header)] + [json.dumps(
        {"name": "Robin" if i % 2 == 0 else "Seraphina", "is_user": i % 2 == 0,
         "is_system": False, "send_date": "June 6, 2024 3:14pm",
         "mes": "words " * 20 + str(i), "extra": {"api": "openai"}})
        for i in range(CHAT_IMPORT["messages"])]
    return "\n".join(lines).encode("utf-8")


def _post_file(server, path: str, data: bytes) -> tuple[int, dict]:
    boundary, body = encode_multipart({"file": FileStorage(io.BytesIO(data), "chat.jsonl")})
    with closing(http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)) as conn:
        conn.request("POST", path, body,
                     {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())


def test_a_huge_import_never_blocks_the_event_loop_in_its_own_code(data_dir, tmp_path):
    env = {"PERSONA_WORKERS": "1", "GEVENT_MONITOR_THREAD_ENABLE": "true",
           "GEVENT_MAX_BLOCKING_TIME": "0.5"}
    data = _huge_chat()
    with ServerProcess(data_dir, tmp_path / "server.log", **env) as server:
        path = "/api/personas/default/chats/import"
        status, preview = _post_file(server, path + "?preview=1", data)
        assert status == 200, preview
        status, session = _post_file(server, path, data)
        assert status == 201, session
        assert session["message_count"] == CHAT_IMPORT["messages"]
        log = server.log()
    stacks = [part.split("Info:")[0] for part in log.split("Blocked Stack")[1:]]
    reports = [stack for stack in stacks if any(frame in stack for frame in IMPORT_FRAMES)]
    assert not reports, reports[0][:3000]


SIZING_FRAMES = ("in imported_sizes", "in split_windows", "in _windows_at")


def _long_chat() -> bytes:
    """The most messages an import takes, each about 200 characters (14 MiB)."""
    header = {"user_name": "Robin", "character_name": "Seraphina", "create_date": ""}
    lines = [json.dumps(header)] + [json.dumps(
        {"name": "Robin" if i % 2 == 0 else "Seraphina", "is_user": i % 2 == 0,
         "send_date": 1717687020000 + i * 60_000,
         "mes": f"Message {i}: " + "lorem ipsum dolor sit amet " * 7})
        for i in range(CHAT_IMPORT["messages"])]
    return "\n".join(lines).encode("utf-8")


def test_sizing_a_huge_import_for_learning_never_blocks_the_event_loop(data_dir, tmp_path):
    """Cutting a history into windows reads every message's size in SQLite (0.25-0.7 s wall on
    the shared VM when it ran on the loop): the estimate, the start and the worker do it in the
    thread pool, so the blocking report (src/blocking_report.py, any block over 0.1 s) never
    shows the event loop inside it."""
    with ServerProcess(data_dir, tmp_path / "server.log", PERSONA_WORKERS="1") as server:
        status, session = _post_file(server, "/api/personas/default/chats/import", _long_chat())
        assert status == 201, session
        learn = f"/api/sessions/{session['id']}/learn"
        with closing(http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)) as conn:
            conn.request("GET", learn + "/estimate")
            response = conn.getresponse()
            estimate = json.loads(response.read())
            assert response.status == 200, estimate
            assert estimate["messages"] == CHAT_IMPORT["messages"]
            conn.request("POST", learn, "{}", {"Content-Type": "application/json"})
            response = conn.getresponse()
            started = json.loads(response.read())
            assert response.status == 202, started
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # the worker cuts the windows, then fails: no key
                conn.request("GET", learn)
                run = json.loads(conn.getresponse().read())["run"]
                if run["status"] == "failed":
                    break
            assert (run["status"], run["error"]) == ("failed", "not_configured"), run
            assert run["messages"] == CHAT_IMPORT["messages"]
        with open(server.blocking_report, encoding="utf-8") as report:
            blocks = [json.loads(line) for line in report]
    inside = [b for b in blocks if any(frame in b["report"] for frame in SIZING_FRAMES)]
    assert not inside, inside[0]["report"][-3000:]
