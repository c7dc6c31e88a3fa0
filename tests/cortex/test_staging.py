"""StagedEdits: edits held in memory, replayed on a person's newer text or refused as conflicts."""
import pytest

from src.utils.cortex.staging import StagedEdits, StagingConflict

BASE = "# Memories\n- tea\n- books\n"


def _staged(text: str = BASE) -> StagedEdits:
    return StagedEdits("anna0001", {"memory.md": (1, text), "soul.md": (2, "# Soul\n")},
                       hard_cap=1000)


def test_edits_stay_staged_and_only_changed_files_count():
    staged = _staged()
    staged.str_replace("memory.md", "- tea\n", "- green tea\n")
    staged.insert("memory.md", 3, "- cats")
    staged.insert("soul.md", 1, "x")
    staged.str_replace("soul.md", "x\n", "")
    assert [f.filename for f in staged.changed_files()] == ["memory.md"]
    assert staged.file("memory.md").content == "# Memories\n- green tea\n- books\n- cats\n"
    assert staged.file("memory.md").base_content == BASE


@pytest.mark.parametrize("person, expected", [
    ("Intro.\n" + BASE, "Intro.\n# Memories\n- green tea\n- books\n- cats\n"),
    (BASE + "- sister Lena\n", "# Memories\n- green tea\n- books\n- cats\n- sister Lena\n"),
    (BASE.replace("- books\n", "- books\n- books\n"),  # anchor twice: insert was at the end
     "# Memories\n- green tea\n- books\n- books\n- cats\n"),
])
def test_str_replace_and_insert_are_replayed_on_a_persons_text(person, expected):
    staged = _staged()
    staged.str_replace("memory.md", "- tea\n", "- green tea\n")
    staged.insert("memory.md", 3, "- cats")
    assert staged.rebase("memory.md", 5, person) is True
    assert staged.file("memory.md").content == expected
    assert (staged.file("memory.md").base_revision, staged.file("memory.md").base_content) == \
        (5, person)


@pytest.mark.parametrize("edit, person", [
    (lambda s: s.str_replace("memory.md", "- tea\n", "- green tea\n"), "# Memories\n- coffee\n"),
    (lambda s: s.str_replace("memory.md", "- tea\n", "x"), BASE + "- tea\n"),
    (lambda s: s.insert("memory.md", 2, "- cats"), "# Memories\n- books\n"),
    (lambda s: s.write("memory.md", "# New\n"), BASE + "- more\n"),
])
def test_edits_that_no_longer_fit_are_a_conflict_and_change_nothing(edit, person):
    staged = _staged()
    edit(staged)
    before = staged.file("memory.md").content
    with pytest.raises(StagingConflict):
        staged.rebase("memory.md", 5, person)
    assert staged.file("memory.md").content == before
    assert staged.file("memory.md").base_revision == 1


def test_a_new_revision_with_the_same_text_needs_no_replay():
    staged = _staged()
    staged.write("memory.md", "# New\n")
    assert staged.rebase("memory.md", 7, BASE) is False
    assert staged.file("memory.md").content == "# New\n"
    assert staged.file("memory.md").base_revision == 7


def test_a_replay_over_the_hard_cap_is_a_conflict():
    staged = StagedEdits("anna0001", {"memory.md": (1, "a\n")}, hard_cap=20)
    staged.insert("memory.md", 1, "b" * 10)
    with pytest.raises(StagingConflict):
        staged.rebase("memory.md", 2, "a\n" + "c" * 10 + "\n")
