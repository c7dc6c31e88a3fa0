"""Pinned text: the model's edit tools refuse to change, drop or add pinned blocks."""
import pytest

from src.utils.cortex import pins
from src.utils.cortex.staging import EditError, StagedEdits
from src.utils.cortex.tools import CortexToolbox
from tests.cortex.review_support import accept, proposal, replace_reply, review_on
from tests.cortex.update_support import PID, prompt_text, result_text, system_text, tool_results
from tests.fakes.claude import replies

PINNED = ("# Memories\n\n## Facts\n<!-- pin -->\n- Jonas is allergic to peanuts.\n"
          "- His sister is called Lea.\n<!-- /pin -->\n- Jonas lives in Bremen.\n\n"
          "## Shared moments\n<!-- pin -->\n- We met on 2025-03-01.\n<!-- /pin -->\n")
BLOCK_A = "<!-- pin -->\n- Jonas is allergic to peanuts.\n- His sister is called Lea.\n<!-- /pin -->"
BLOCK_B = "<!-- pin -->\n- We met on 2025-03-01.\n<!-- /pin -->"


def _staged(text: str = PINNED) -> StagedEdits:
    return StagedEdits(PID, {"memory.md": (1, text)}, hard_cap=48_000)


def test_parse_finds_blocks_with_lines():
    spans, warnings = pins.parse(PINNED)
    assert [(s.first_line, s.last_line, s.text) for s in spans] == [(4, 7, BLOCK_A),
                                                                     (11, 13, BLOCK_B)]
    assert warnings == []


@pytest.mark.parametrize("text,line,fragment", [
    ("a\n<!-- pin -->\nb\n", 2, "never closed"),
    ("a\n<!-- /pin -->\nb\n", 2, "without"),
    ("<!-- pin -->\na\n<!-- pin -->\nb\n<!-- /pin -->\n", 1, "never closed before"),
    ("<!--pin-->\na\n<!-- /pin -->\n", 1, "not written exactly"),
])
def test_broken_markers_pin_nothing_and_warn(text, line, fragment):
    spans, warnings = pins.parse(text)
    assert warnings and warnings[0]["line"] == line and fragment in warnings[0]["message"]
    assert all(s.text.count("<!-- pin -->") == 1 for s in spans)
    staged = StagedEdits(PID, {"memory.md": (1, text)}, hard_cap=48_000)
    if not spans:
        staged.str_replace("memory.md", "a\n", "changed\n")


@pytest.mark.parametrize("old,new", [
    ("- Jonas is allergic to peanuts.", "- Jonas is allergic to nuts."),
    ("<!-- /pin -->\n- Jonas lives", "\n- Jonas lives"),
    ("## Facts\n<!-- pin -->", "## Facts\n<!-- pin -->\n- New line inside."),
])
def test_str_replace_touching_pinned_text_is_refused(old, new):
    staged = _staged()
    with pytest.raises(EditError) as err:
        staged.str_replace("memory.md", old, new)
    assert err.value.kind == "pinned" and err.value.details["span"].first_line == 4
    assert staged.file("memory.md").content == PINNED and staged.file("memory.md").edits == []


@pytest.mark.parametrize("old,new", [
    ("## Facts\n", "## Facts about Jonas\n"),
    ("<!-- /pin -->\n- Jonas lives in Bremen.", "<!-- /pin -->\n- Jonas lives in Hamburg."),
    ("- Jonas lives in Bremen.\n", "- Jonas lives in Bremen.\n- He likes chess.\n"),
    ("-->\n- Jonas lives in Bremen.", "--> - Jonas lives in Bremen."),
])
def test_edits_at_the_edge_of_a_pin_are_allowed(old, new):
    staged = _staged()
    text = staged.str_replace("memory.md", old, new)
    assert BLOCK_A in text and BLOCK_B in text


@pytest.mark.parametrize("line,allowed", [(3, True), (4, False), (5, False), (6, False),
                                          (7, True), (10, True), (12, False), (13, True)])
def test_insert_inside_a_pin_is_refused_but_next_to_it_allowed(line, allowed):
    staged = _staged()
    if allowed:
        assert BLOCK_A in staged.insert("memory.md", line, "- new")
        return
    with pytest.raises(EditError) as err:
        staged.insert("memory.md", line, "- new")
    assert err.value.kind == "pinned"


def test_write_file_may_reorder_pinned_blocks_kept_byte_for_byte():
    staged = _staged()
    reordered = f"# Memories\n\n{BLOCK_B}\n\n## Facts\n{BLOCK_A}\n- Bremen.\n"
    assert staged.write("memory.md", reordered) == reordered


@pytest.mark.parametrize("content", [
    "# Memories\n\n" + BLOCK_A + "\n",
    "# Memories\n" + BLOCK_A + "\n" + BLOCK_B.replace("2025-03-01", "2025-03-02") + "\n",
    "# Memories\n" + BLOCK_A.replace("\n- His", "\n-  His") + "\n" + BLOCK_B + "\n",
    "# Memories\n" + BLOCK_A + "\n" + BLOCK_B + "\n<!-- pin -->\nMine now.\n<!-- /pin -->\n",
    "# Memories\n" + BLOCK_A + "\n" + BLOCK_B + "\n" + BLOCK_B + "\n",
])
def test_write_file_that_changes_drops_or_adds_pins_is_refused(content):
    with pytest.raises(EditError) as err:
        _staged().write("memory.md", content)
    assert err.value.kind == "pinned"


@pytest.mark.parametrize("edit", [
    lambda s: s.str_replace("memory.md", "## Facts\n", "## Facts\n<!-- pin -->\n"),
    lambda s: s.insert("memory.md", 7, "<!-- /pin -->"),
    lambda s: s.insert("memory.md", 13, "<!--PIN-->"),
    lambda s: s.write("memory.md", PINNED + "<!-- pin -->\n"),
])
def test_a_lone_marker_the_model_adds_is_refused_too(edit):
    """A stray marker would show the person a broken-pin warning they never caused."""
    staged = _staged()
    with pytest.raises(EditError) as err:
        edit(staged)
    assert err.value.kind == "pinned" and err.value.details["span"] == "added"
    assert staged.file("memory.md").content == PINNED


def test_the_tool_error_names_the_span_and_nothing_is_staged(env):
    env.persona()
    env.write("memory.md", PINNED)
    toolbox = CortexToolbox(env.cortex, env.cortex.stage(PID))
    ok, text = toolbox("str_replace", {"filename": "memory.md", "old_str": "peanuts",
                                       "new_str": "nuts"})
    assert not ok
    assert 'lines 4-7 ("<!-- pin --> - Jonas is allergic to peanuts.' in text
    assert "Nothing was changed." in text and toolbox.files_changed == []
    ok, text = toolbox("write_file", {"filename": "memory.md", "content": "# Memories\n"})
    assert not ok and "lines 4-7" in text


def test_an_update_run_sees_pins_is_refused_and_can_retry_around_them(env, claude):
    env.persona()
    env.write("memory.md", PINNED)
    env.say(env.session(), "Actually my sister is called Lena and I moved to Hamburg.", "Oh!")
    claude.enqueue(
        replies.tool_use([("str_replace", {"filename": "memory.md", "old_str": "called Lea.",
                                           "new_str": "called Lena."})]),
        replies.tool_use([("str_replace", {"filename": "memory.md", "old_str": "in Bremen.",
                                           "new_str": "in Hamburg."})]),
        replies.text("Moved to Hamburg; the sister's name is pinned."))
    job = env.run_job()
    first, retry, _ = claude.requests
    assert 'pinned_lines="4-7, 11-13"' in prompt_text(first)
    assert "<!-- pin -->" in system_text(first)
    (refusal,) = tool_results(retry)
    assert refusal.get("is_error") and "lines 4-7" in result_text(refusal)
    assert job.status == "done"
    assert env.read("memory.md") == PINNED.replace("in Bremen.", "in Hamburg.")


def test_a_proposal_whose_edit_hits_text_pinned_meanwhile_is_a_conflict(client, env, claude):
    env.persona()
    text = PINNED.replace("<!-- pin -->\n- We met", "- We met").replace(
        "2025-03-01.\n<!-- /pin -->\n", "2025-03-01.\n")
    env.write("memory.md", text)
    review_on(client)
    env.say(env.session(), "We met in March.", "Yes.")
    claude.enqueue(*replace_reply("- We met on 2025-03-01.", "- We met in Bremen on 2025-03-01."))
    proposal_id = env.run_job().proposal_id
    rev = env.write("memory.md", PINNED)
    (file,) = proposal(client, proposal_id)["files"]
    assert (file["stale"], file["conflict"]) == (True, True)
    assert accept(client, proposal_id).status_code == 409
    assert env.read("memory.md") == PINNED and env.cortex.read_file_info(PID, "memory.md").revision == rev


def test_pins_endpoint_reports_blocks_and_broken_markers(client, env):
    env.persona()
    env.write("memory.md", PINNED + "<!-- pin -->\n- unfinished\n")
    body = client.get(f"/api/personas/{PID}/cortex/memory.md/pins").get_json()
    assert [(p["first_line"], p["last_line"]) for p in body["pins"]] == [(4, 7), (11, 13)]
    assert body["warnings"] == [{"line": 14, "message": body["warnings"][0]["message"]}]
    assert "never closed" in body["warnings"][0]["message"]
    assert client.get(f"/api/personas/{PID}/cortex/nope.md/pins").status_code == 404
