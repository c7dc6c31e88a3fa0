"""Memory notes in the chat seen from the browser: a conversation that ends in a note opens (and
reloads) at its end, and a note leaves once the memory line it names was restored away."""
import pytest
from playwright.sync_api import expect

from src.utils import provider
from src.utils.storage.messages import add_message
from tests.browser.support import open_page

pytestmark = pytest.mark.browser
MEMORY = "# Memories\n\n## Facts\n"
LINES = [f"- Jonas told a story about day {n}." for n in range(1, 5)]
AT_END = "(el) => el.scrollHeight - el.scrollTop - el.clientHeight < 2"


def _conversation(page, server, app, turns: int) -> tuple[str, int, int]:
    """A session of `turns` exchanges and an update that remembered LINES from all of them;
    returns the session id, the memory revision before the update and the update's revision."""
    session = page.request.post(server.url + "/api/sessions", data={"persona_id": "default"}).json()
    conn = provider.get_db(app).conn()
    ids = []
    for n in range(turns):
        ids.append(add_message(conn, session["id"], "user", f"Day {n}: " + "words " * 40)["id"])
        ids.append(add_message(conn, session["id"], "assistant", "Tell me more. " * 20)["id"])
    cortex = provider.get_cortex_service(app)
    before = cortex.write_file("default", "memory.md", MEMORY)
    rev = cortex.write_file("default", "memory.md", MEMORY + "\n".join(LINES) + "\n", author="ai",
                            job_id="job1", message_range=(ids[0], ids[-1]), summary="stories")
    return session["id"], before, rev


def _at_end(page) -> None:
    page.wait_for_function(f"() => ({AT_END})(document.getElementById('messages'))")
    expect(page.locator("#jump-latest")).to_be_hidden()


def test_a_conversation_ending_in_a_note_opens_and_reloads_at_its_end(page, server, app):
    sid, _, _ = _conversation(page, server, app, 12)
    open_page(page, server, f"/?persona=default&session={sid}")
    note = page.locator("#messages .msg-assistant + .memory-note")
    expect(note.locator("li")).to_have_count(len(LINES))
    _at_end(page)
    page.reload()
    expect(note.locator("li")).to_have_count(len(LINES))
    _at_end(page)
    box = page.locator("#messages").bounding_box()
    last = note.bounding_box()
    assert last["y"] + last["height"] <= box["y"] + box["height"] + 1


def test_a_note_leaves_when_its_lines_were_restored_away(page, server, app):
    sid, before, _ = _conversation(page, server, app, 2)
    first = page.request.get(server.url + f"/api/sessions/{sid}").json()["messages"][1]["id"]
    provider.get_cortex_service(app).write_file(
        "default", "soul.md", "I love stories.\n", author="ai", job_id="job0",
        message_range=(first, first))
    open_page(page, server, f"/?persona=default&session={sid}")
    stays = page.locator(f"#messages .msg[data-id='{first}'] + .memory-note")
    note = page.locator("#messages .memory-note").last
    expect(stays.locator("li")).to_have_text(["I love stories."])
    expect(note.locator("li")).to_have_count(len(LINES))

    memory = page.request.get(server.url + "/api/personas/default/cortex/memory.md").json()
    kept = MEMORY + LINES[0] + "\n"
    page.request.put(server.url + "/api/personas/default/cortex/memory.md", data={"content": kept},
                     headers={"If-Match": f'"{memory["revision"]}"'})
    page.reload()
    expect(note.locator("li")).to_have_text([LINES[0][2:]])

    restored = page.request.post(
        server.url + f"/api/personas/default/cortex/memory.md/history/{before}/restore", data={})
    assert restored.ok, restored.text()
    page.reload()
    expect(stays.locator("li")).to_have_text(["I love stories."])
    expect(page.locator("#messages .memory-note")).to_have_count(1)
