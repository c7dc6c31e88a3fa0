"""Provenance (issue 15): each reply records the cortex revisions its prompt held, each AI
revision the messages it came from; both readable over REST."""
import pytest

from tests.memory.support import add_line


def test_a_reply_records_the_revisions_in_its_prompt_and_the_message_route_shows_them(convo):
    pid = convo.persona()
    sid = convo.session(pid)
    convo.say(sid, "I adopted a cat named Pixel!", "How lovely!")
    first = {name: convo.file(pid, name)["revision"]
             for name in ("memory.md", "soul.md", "relationship.md")}
    convo.remember(pid, add_line("- Jonas has a cat named Pixel."))
    fact = convo.history(pid)[0]["rev"]
    convo.say(sid, "What do you know about me?", "You have a cat, Pixel.")
    user, early, _, late = convo.messages(sid)
    assert early["cortex_revisions"] == first
    assert late["cortex_revisions"] == {**first, "memory.md": convo.file(pid)["revision"]}
    assert "cortex_revisions" not in user

    detail = convo.call("GET", f"/api/sessions/{sid}/messages/{late['id']}")
    assert detail["cortex_revisions"] == late["cortex_revisions"] and detail["on_branch"]
    told = convo.call("GET", f"/api/sessions/{sid}/messages/{user['id']}")
    assert told["memory"] == [{"filename": "memory.md", "rev": fact, "kind": "derived",
                               "author": "ai"}]


def test_history_entries_carry_source_and_reverts_for_every_author(convo):
    pid = convo.persona()
    sid = convo.session(pid)
    convo.say(sid, "I live in Leipzig.", "A fine city.")
    convo.remember(pid, add_line("- Jonas lives in Leipzig."))
    convo.edit(pid, convo.memory(pid) + "- typed by Jonas\n")
    entries = convo.history(pid)
    assert [(e["author"], e["source"] is None, e["reverts"]) for e in entries] == [
        ("user", True, None), ("ai", False, None), ("template", True, None)]
    detail = convo.call("GET", f"/api/personas/{pid}/cortex/memory.md/history/"
                               f"{entries[1]['rev']}")
    assert detail["source"]["session_id"] == sid and len(detail["source"]["message_ids"]) == 2


@pytest.mark.parametrize("path, status", [
    ("/api/sessions/{sid}/messages/99999999", 404),
    ("/api/sessions/{sid}/messages/999999999999999999999", 404),
    ("/api/sessions/{sid}/messages/-1", 404),
    ("/api/sessions/{sid}/messages/abc", 404),
    ("/api/sessions/zzzzzzzzzzzzzzzz/messages/1", 404),
    ("/api/sessions/{other}/messages/{mid}", 404),
])
def test_the_message_route_refuses_what_is_not_there(convo, path, status):
    pid = convo.persona()
    sid, other = convo.session(pid), convo.session(pid)
    convo.say(sid, "Hello", "Hi")
    mid = convo.messages(sid)[0]["id"]
    body = convo.call("GET", path.format(sid=sid, other=other, mid=mid), status=status)
    assert body["error"]["code"].endswith("not_found")
