"""Memory notes in a conversation's timeline (issue 11): "Mira remembered: …" after the last
message an update read, with the lines it added; derived from the revisions, so they follow the
active branch and leave out consolidations and the person's own edits."""
import pytest

from src.utils import provider

MEMORY = "# Memories\n\n## Facts\n- Jonas lives in Bremen.\n"


@pytest.fixture
def cortex(app):
    service = provider.get_cortex_service(app)
    service.write_file("default", "memory.md", MEMORY)
    return service


def _notes(client, sid: str) -> list[dict]:
    response = client.get(f"/api/sessions/{sid}/memory-notes")
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["session_id"] == sid
    return response.get_json()["notes"]


def test_an_update_leaves_a_note_after_the_last_message_it_read(client, cortex, make_session,
                                                                 add_messages):
    sid = make_session()["id"]
    msgs = add_messages(sid, 4)
    rev = cortex.write_file("default", "memory.md", MEMORY + "- Jonas has a cat, Miso.\n\n"
                            "- He plays chess.\n", author="ai", job_id="job1",
                            message_range=(msgs[0]["id"], msgs[1]["id"]), summary="cat")
    soul = cortex.write_file("default", "soul.md", "I like cats.\n", author="ai", job_id="job1",
                             message_range=(msgs[0]["id"], msgs[1]["id"]), summary="cat")
    (note,) = _notes(client, sid)
    assert note["after_message_id"] == msgs[1]["id"] and note["job_id"] == "job1"
    assert note["files"] == [
        {"filename": "memory.md", "rev": rev, "added": ["- Jonas has a cat, Miso.",
                                                        "- He plays chess."], "more": 0},
        {"filename": "soul.md", "rev": soul, "added": ["I like cats."], "more": 0}]


def test_long_additions_are_cut_to_six_lines_and_counted(client, cortex, make_session,
                                                         add_messages):
    sid = make_session()["id"]
    msgs = add_messages(sid, 2)
    added = "".join(f"- fact {i} " + "x" * 400 + "\n" for i in range(9))
    cortex.write_file("default", "memory.md", MEMORY + added, author="ai", job_id="j",
                      message_range=(msgs[0]["id"], msgs[1]["id"]))
    (file,) = _notes(client, sid)[0]["files"]
    assert len(file["added"]) == 6 and file["more"] == 3
    assert all(len(line) == 300 for line in file["added"])


def test_the_persons_edits_and_consolidations_make_no_note(client, cortex, make_session,
                                                           add_messages):
    sid = make_session()["id"]
    add_messages(sid, 2)
    cortex.write_file("default", "memory.md", MEMORY + "- typed by the person\n")
    cortex.write_file("default", "memory.md", MEMORY, author="ai", job_id="sleep",
                      summary="consolidated: 60 → 40 characters")
    assert _notes(client, sid) == []


def test_a_note_follows_the_active_branch_and_stays_in_its_session(client, cortex, make_session,
                                                                   add_messages):
    sid, other = make_session()["id"], make_session()["id"]
    msgs = add_messages(sid, 2)
    later = add_messages(other, 2, start=2)
    cortex.write_file("default", "memory.md", MEMORY + "- cat\n", author="ai", job_id="j",
                      message_range=(msgs[0]["id"], later[1]["id"]))
    assert [n["after_message_id"] for n in _notes(client, sid)] == [msgs[1]["id"]]
    assert [n["after_message_id"] for n in _notes(client, other)] == [later[1]["id"]]

    edited = client.patch(f"/api/messages/{msgs[0]['id']}", json={"content": "no cat"})
    assert edited.status_code == 200, edited.get_json()
    assert _notes(client, sid) == []          # what the update read left the branch
    switched = client.put(f"/api/sessions/{sid}/active", json={"message_id": msgs[1]["id"]})
    assert switched.status_code == 200, switched.get_json()
    assert [n["after_message_id"] for n in _notes(client, sid)] == [msgs[1]["id"]]


def test_notes_of_unknown_sessions_are_404(client):
    for sid in ("nope", "0" * 16):
        response = client.get(f"/api/sessions/{sid}/memory-notes")
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "session_not_found"


def test_a_line_restored_away_leaves_the_note_and_a_note_with_none_left_goes(
        client, cortex, make_session, add_messages):
    sid = make_session()["id"]
    msgs = add_messages(sid, 4)
    before = cortex.write_file("default", "memory.md", MEMORY)
    cortex.write_file("default", "memory.md", MEMORY + "- Jonas has a cat, Miso.\n- He plays chess.\n",
                      author="ai", job_id="job1", message_range=(msgs[0]["id"], msgs[1]["id"]))
    cortex.write_file("default", "memory.md", MEMORY + "- He plays chess.\n")
    (note,) = _notes(client, sid)
    assert note["files"][0]["added"] == ["- He plays chess."]

    cortex.restore("default", "memory.md", before)
    assert _notes(client, sid) == []


def test_added_lines_are_those_beyond_what_the_file_held_moved_lines_are_not(
        client, cortex, make_session, add_messages):
    """Added lines are counted as a multiset (linear, docs/chat.md): a line moved to another
    place is not new (a sequence diff called it inserted), an edited line is."""
    sid = make_session()["id"]
    msgs = add_messages(sid, 2)
    cortex.write_file("default", "memory.md", MEMORY + "- Likes tea.\n")
    moved = "# Memories\n\n## Facts\n- Likes tea.\n- Jonas lives in Bremen.\n"
    rev = cortex.write_file("default", "memory.md", moved + "- Jonas lives in Hamburg.\n",
                            author="ai", job_id="j", message_range=(msgs[0]["id"],
                                                                    msgs[1]["id"]))
    (file,) = _notes(client, sid)[0]["files"]
    assert file == {"filename": "memory.md", "rev": rev, "more": 0,
                    "added": ["- Jonas lives in Hamburg."]}
