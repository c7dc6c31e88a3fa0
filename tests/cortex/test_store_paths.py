"""Path battery against every CortexService method: bad ids and names never reach the disk."""
import os

import pytest

from src.utils.cortex import CortexService, InvalidFilename, InvalidPersonaId, UnsafePath
from src.utils.storage import Database
from tests.cortex.support import BAD_FILENAMES, BAD_PERSONA_IDS, snapshot


@pytest.fixture
def world(tmp_path, data_dir):
    """A data dir with a default cortex, and a sibling directory that must stay untouched."""
    sibling = tmp_path / "sibling"
    (sibling / "cortex" / "default").mkdir(parents=True)
    (sibling / "memory.md").write_text("SIBLING SECRET")
    (sibling / "cortex" / "default" / "memory.md").write_text("SIBLING CORTEX")
    db = Database(os.path.join(data_dir, "app.db"))
    service = CortexService(str(data_dir), db)
    service.ensure_cortex_files("default")
    return service, db, tmp_path


def _file_calls(pid, filename):
    """Every method that takes a filename."""
    return [
        lambda s: s.read_file(pid, filename),
        lambda s: s.read_file_info(pid, filename),
        lambda s: s.write_file(pid, filename, "pwned"),
        lambda s: s.edit_file(pid, filename, lambda text: "pwned"),
        lambda s: s.history(pid, filename),
        lambda s: s.get_revision(pid, filename, 1),
        lambda s: s.restore(pid, filename, 1),
        lambda s: s.reset(pid, filename),
    ]


def _persona_calls(pid):
    """Every method, with a valid filename."""
    return _file_calls(pid, "memory.md") + [
        lambda s: s.get_cortex_path(pid),
        lambda s: s.ensure_cortex_files(pid),
        lambda s: s.read_all(pid),
        lambda s: s.read_all_info(pid),
        lambda s: s.get_cortex_for_prompt(pid),
        lambda s: s.delete_cortex_dir(pid),
        lambda s: s.lock(pid).__enter__(),
    ]


def _revisions(db):
    return db.conn().execute("SELECT COUNT(*), MAX(id) FROM cortex_revisions").fetchone()[:]


@pytest.mark.parametrize("pid", BAD_PERSONA_IDS, ids=repr)
def test_bad_persona_ids_are_rejected_before_any_path(world, pid):
    service, db, root = world
    before, revisions = snapshot(root), _revisions(db)
    for call in _persona_calls(pid):
        with pytest.raises(InvalidPersonaId):
            call(service)
    assert snapshot(root) == before
    assert _revisions(db) == revisions


@pytest.mark.parametrize("filename", BAD_FILENAMES, ids=repr)
def test_bad_filenames_are_rejected_before_any_path(world, filename):
    service, db, root = world
    before, revisions = snapshot(root), _revisions(db)
    for call in _file_calls("default", filename):
        with pytest.raises(InvalidFilename):
            call(service)
    assert snapshot(root) == before
    assert _revisions(db) == revisions


def test_validation_errors_are_value_errors():
    assert issubclass(InvalidPersonaId, ValueError)
    assert issubclass(InvalidFilename, ValueError)


def test_a_symlink_out_of_the_cortex_is_refused(world, data_dir):
    service, _db, root = world
    custom = data_dir / "cortex" / "custom"
    custom.mkdir()
    (custom / "abcd1234").symlink_to(root / "sibling" / "cortex" / "default")
    (data_dir / "cortex" / "default" / "soul.md").unlink()
    (data_dir / "cortex" / "default" / "soul.md").symlink_to(root / "sibling" / "memory.md")
    before = snapshot(root)
    for pid, filename in [("abcd1234", "memory.md"), ("default", "soul.md")]:
        with pytest.raises(UnsafePath):
            service.write_file(pid, filename, "pwned")
        with pytest.raises(UnsafePath):
            service.read_file_info(pid, filename)
    assert snapshot(root) == before
    assert (root / "sibling" / "memory.md").read_text() == "SIBLING SECRET"


def test_a_cortex_directory_swapped_for_a_symlink_later_is_refused(world, data_dir):
    service, _db, root = world
    service.read_file_info("default", "memory.md")
    moved = root / "moved-cortex"
    (data_dir / "cortex").rename(moved)
    (data_dir / "cortex").symlink_to(moved)  # same files, reached from outside the data dir
    with pytest.raises(UnsafePath):
        service.read_file_info("default", "memory.md")
    with pytest.raises(UnsafePath):
        service.write_file("default", "memory.md", "pwned")
    assert "pwned" not in (moved / "default" / "memory.md").read_text()
