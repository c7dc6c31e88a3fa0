"""Nothing stored can break a later request: a lone surrogate an older version stored in the
settings, bytes another tool wrote into SQLite that are not UTF-8, and a lone surrogate in the
model's own output (reply, title, update summary) all read back as U+FFFD; chats and cortex
updates go on working."""
import json
import sqlite3
from contextlib import closing

import pytest

from src.utils import provider
from tests.cortex.update_support import PID, system_text
from tests.fakes.claude import replies
from tests.fakes.messages import Streamable

LONE = "\ud800"
MARK = "☃"


class _LoneSurrogateText(Streamable):
    """A text reply whose wire JSON carries `\\ud800` wherever the base text has ☃."""

    def __init__(self, base):
        self.base = base

    def events(self, ex) -> list[bytes]:
        return [raw.replace(MARK.encode(), b"\\ud800") for raw in self.base.events(ex)]


def _hostile(text: str) -> _LoneSurrogateText:
    return _LoneSurrogateText(replies.text(text))


def _sql(data_dir, sql: str, *params) -> list[tuple]:
    with closing(sqlite3.connect(data_dir / "app.db")) as conn, conn:
        return conn.execute(sql, params).fetchall()


def _chat(client, text: str = "Hello") -> list[tuple[str, dict]]:
    sid = client.post("/api/sessions", json={"persona_id": "default"}).get_json()["id"]
    response = client.post("/api/chat/stream", json={"session_id": sid, "message": text})
    assert response.status_code == 200, response.get_json()
    body = response.get_data().decode("utf-8")
    events = []
    for record in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in record.split("\n"))
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def _chat_requests(claude) -> list:
    return [r for r in claude.requests if r.stream and not r.tools]


def test_a_lone_surrogate_stored_in_the_settings_by_an_older_version_breaks_nothing(
        client, claude, data_dir):
    _sql(data_dir, "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES "
         "('app', ?, '2025-01-01T00:00:00Z')", json.dumps({"user_name": f"Jo{LONE}"}))
    claude.default = replies.text("Hi Jo.")
    assert client.get("/api/settings").get_json()["user_name"] == "Jo\ufffd"
    events = _chat(client)
    assert events[-1][0] == "done" and events[-1][1]["text"] == "Hi Jo."
    assert "Jo\ufffd" in system_text(_chat_requests(claude)[-1])
    changed = client.put("/api/settings", json={"language": "de"})
    assert changed.status_code == 200 and changed.get_json()["user_name"] == "Jo\ufffd"


def test_text_another_tool_stored_as_invalid_utf8_reads_as_replacement(client, claude,
                                                                       data_dir):
    _sql(data_dir, "UPDATE personas SET name = CAST(x'41eda08042' AS TEXT), "
         "greeting = CAST(x'ff' AS TEXT) WHERE id = 'default'")
    claude.default = replies.text("Still here.")
    listed = client.get("/api/personas/default")
    assert listed.status_code == 200 and client.get("/api/personas").status_code == 200
    assert listed.get_json()["name"] == "A\ufffd\ufffd\ufffdB"
    assert listed.get_json()["greeting"] == "\ufffd"
    assert _chat(client)[-1][1]["text"] == "Still here."
    assert "A\ufffd\ufffd\ufffdB" in system_text(_chat_requests(claude)[-1])


def test_a_message_another_tool_stored_as_invalid_utf8_reaches_the_history_as_replacement(
        client, claude, data_dir):
    """The history is read with sqlite3's own decoder (`db.plain_rows`), which refuses such
    bytes: the query is read again the forgiving way, and the turn goes on."""
    claude.default = replies.text("First answer.")
    sid = _chat(client, "Remember this")[0][1]["session_id"]
    _sql(data_dir, "UPDATE messages SET content = CAST(x'4869ff21' AS TEXT) WHERE role = 'user'")
    claude.default = replies.text("Second answer.")
    response = client.post("/api/chat/stream", json={"session_id": sid, "message": "And now?"})
    assert response.status_code == 200 and b"Second answer." in response.get_data()
    history = [turn["content"] for turn in _chat_requests(claude)[-1].messages]
    assert history[:2] == ["Hi\ufffd!", "First answer."], history
    assert history[2] == "And now?" or history[2][0]["text"] == "And now?", history


@pytest.mark.parametrize("reply", [f"Hello {MARK} there", f"{MARK}"])
def test_a_lone_surrogate_in_the_models_reply_is_stored_and_sent_as_replacement(
        client, claude, data_dir, reply):
    claude.default = _hostile(reply)
    events = _chat(client)
    expected = reply.replace(MARK, "\ufffd")
    assert events[-1][0] == "done", events
    assert "".join(data["text"] for kind, data in events if kind == "chunk") == expected
    assert _sql(data_dir, "SELECT content FROM messages WHERE role = 'assistant'") == [
        (expected,)]
    claude.default = replies.text("Next turn works.")
    assert _chat(client)[-1][1]["text"] == "Next turn works."


def test_a_lone_surrogate_in_an_update_summary_and_a_title_is_stored_as_replacement(
        env, client, claude, data_dir):
    env.persona()
    sid = env.session()
    env.say(sid, "I adopted a cat.", "Lovely!")
    claude.enqueue(_hostile(f"Noted {MARK}."))
    job = env.run_job()
    assert job.status == "done" and job.summary == "Noted \ufffd.", job
    sid = client.post("/api/sessions", json={"persona_id": PID}).get_json()["id"]
    claude.enqueue(_hostile(f"Cats {MARK}"))
    session = provider.get_title_generator(env.app).generate(sid, "I adopted a cat.", "Lovely!")
    assert session is not None and session.title == "Cats \ufffd"
    assert _sql(data_dir, "SELECT title FROM sessions WHERE id = ?", sid) == [("Cats \ufffd",)]


def test_a_lone_surrogate_in_a_tool_call_does_not_break_the_next_round(env, claude):
    env.persona()
    sid = env.session()
    env.say(sid, "I adopted a cat.", "Lovely!")
    claude.enqueue(
        _LoneSurrogateText(replies.tool_use(
            [("insert", {"filename": "memory.md", "insert_line": 1,
                         "insert_text": f"- A cat {MARK}"})], text=f"Noting {MARK}")),
        replies.text("Noted."))
    job = env.run_job()
    assert job.status == "done", job
    history = claude.requests[-1].body["messages"]
    sent = json.dumps(history, ensure_ascii=False)
    assert "- A cat \ufffd" in sent and "Noting \ufffd" in sent


_ENTRY = {"book_id": 1, "entry_id": 2, "name": "Harbour", "key": "harbour", "constant": False,
          "position": "before_char", "order": 100, "tokens": 3, "content": "The harbour."}


@pytest.mark.parametrize("column, stored, shown", [
    ("error", {"code": 5, "message": None}, {"code": "api_error", "message": "The reply failed.",
                                             "retryable": True}),
    ("error", {"code": "overloaded", "message": "Busy.", "retryable": True},
     {"code": "overloaded", "message": "Busy.", "retryable": True}),
    ("cortex_revisions", {"memory.md": "seven", "soul.md": [1]}, None),
    ("cortex_revisions", {"memory.md": 7}, {"memory.md": 7}),
    ("world_info", [{"book_id": "x"}, _ENTRY, 3], [_ENTRY]),
    ("world_info", [{"entry_id": 1}], None),
])
def test_json_of_the_wrong_shape_in_a_reply_reads_as_what_the_api_can_show(
        client, claude, data_dir, column, stored, shown):
    claude.default = replies.text("Stored.")
    events = _chat(client)
    session_id, reply_id = events[0][1]["session_id"], events[-1][1]["message_id"]
    _sql(data_dir, f"UPDATE messages SET {column} = ? WHERE id = ?", json.dumps(stored),
         reply_id)
    page = client.get(f"/api/sessions/{session_id}")
    assert page.status_code == 200, page.get_json()
    assert page.get_json()["messages"][-1][column] == shown
    one = client.get(f"/api/sessions/{session_id}/messages/{reply_id}")
    assert one.status_code == 200 and one.get_json()[column] == shown
    assert _sql(data_dir, f"SELECT {column} FROM messages WHERE id = ?", reply_id) == [
        (json.dumps(stored),)]  # reading repairs nothing behind the person's back
