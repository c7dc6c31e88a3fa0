"""Two processes editing one persona at once: every change survives, stale writes conflict."""
import os

import pytest

from src.utils.cortex import CortexService, RevisionConflict
from src.utils.storage import Database
from tests.cortex.support import Lines, spawn

PID = "race0001"
COUNT = 40


@pytest.fixture
def service(data_dir):
    return CortexService(str(data_dir), Database(os.path.join(data_dir, "app.db")))


def _successes(lines: list[str]) -> dict[int, int]:
    """`ok <rev> <i>` lines as {i: rev}."""
    found = {}
    for line in lines:
        if line.startswith("ok "):
            _, rev, index = line.split()
            found[int(index)] = int(rev)
    return found


def test_edit_file_and_expected_revision_writes_from_two_processes(service, data_dir):
    service.ensure_cortex_files(PID)
    base = service.read_file(PID, "memory.md")
    with spawn("edit", str(data_dir), PID, "edit", str(COUNT)) as editor, \
            spawn("write", str(data_dir), PID, "write", str(COUNT)) as writer:
        edit_lines, write_lines = Lines(editor), Lines(writer)
        assert edit_lines.next() == "ready" and write_lines.next() == "ready"
        editor.stdin.write(b"go\n")
        writer.stdin.write(b"go\n")
        edits, writes = edit_lines.until("done"), write_lines.until("done")
    assert editor.returncode == 0 and writer.returncode == 0

    final = service.read_file(PID, "memory.md")
    expected_lines = [f"edit-{i}" for i in range(COUNT)] + [f"write-{i}" for i in range(COUNT)]
    for line in expected_lines:
        assert final.count(line + "\n") == 1, f"{line} was lost or doubled"
    assert final.startswith(base)

    history = service.history(PID, "memory.md")
    by_rev = {r.rev: r for r in history}
    changes = {**{("edit", i): rev for i, rev in _successes(edits).items()},
               **{("write", i): rev for i, rev in _successes(writes).items()}}
    assert len(changes) == 2 * COUNT and len(set(changes.values())) == 2 * COUNT
    for (tag, i), rev in changes.items():
        assert by_rev[rev].author == ("ai" if tag == "edit" else "user")
        assert f"{tag}-{i}\n" in service.get_revision(PID, "memory.md", rev).content
    assert len(history) == 2 * COUNT + 1
    assert [r.author for r in history].count("external") == 0


def test_stale_side_gets_a_conflict_after_another_process_edits(service, data_dir):
    seen = service.read_file_info(PID, "memory.md")
    with spawn("edit", str(data_dir), PID, "other", "1") as editor:
        lines = Lines(editor)
        assert lines.next() == "ready"
        editor.stdin.write(b"go\n")
        lines.until("done")
    with pytest.raises(RevisionConflict) as caught:
        service.write_file(PID, "memory.md", seen.content + "mine\n",
                           expected_revision=seen.revision)
    assert caught.value.current.content == seen.content + "other-0\n"
    assert "mine" not in service.read_file(PID, "memory.md")
