"""The snapshot cache of cortex reads: an unchanged file is not re-read, a changed one always is."""
import os
import time

import pytest

from src.utils.cortex import CORTEX_FILES, CortexService
from src.utils.cortex.snapshots import RACY_SECONDS, FileSnapshots, KeptFile
from src.utils.models.settings import MemoryRunSettings
from src.utils.storage import Database

PID = "snap0001"
LATER = 10 ** 12  # a clock 1000 s ahead: every file on disk counts as settled, so it is remembered


@pytest.fixture
def db(data_dir):
    return Database(os.path.join(data_dir, "app.db"))


def make_service(data_dir, db, clock_offset=LATER):
    return CortexService(str(data_dir), db, settings=lambda: MemoryRunSettings(language="en"),
                         snapshots=FileSnapshots(clock=lambda: time.time_ns() + clock_offset))


@pytest.fixture
def service(data_dir, db):
    return make_service(data_dir, db)


def disk(data_dir, filename="memory.md"):
    return data_dir / "cortex" / "custom" / PID / filename


def content_queries(db, action):
    """The SQL statements that fetched revision content while `action` ran on this thread."""
    seen = []
    db.conn().set_trace_callback(seen.append)
    try:
        action()
    finally:
        db.conn().set_trace_callback(None)
    return [sql for sql in seen if "content FROM cortex_revisions" in sql]


def test_unchanged_files_are_served_without_fetching_content(service, db):
    service.write_file(PID, "memory.md", "remember this\n")
    first = service.read_all(PID)
    assert content_queries(db, lambda: service.read_all(PID)) == []
    assert service.read_all(PID) == first


def test_same_size_edit_with_restored_mtime_is_recorded_as_external(service, data_dir):
    rev = service.write_file(PID, "memory.md", "original text\n")
    assert service.read_file(PID, "memory.md") == "original text\n"
    path = disk(data_dir)
    before = os.stat(path)
    with open(path, "r+b") as handle:  # in place: same inode, same size
        handle.write(b"CHANGED!")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == \
        (before.st_ino, before.st_size, before.st_mtime_ns)
    assert service.read_file(PID, "memory.md") == "CHANGED! text\n"
    newest = service.history(PID, "memory.md")[0]
    assert newest.author == "external" and newest.rev > rev


def test_a_write_by_another_process_is_seen(service, data_dir, db):
    service.write_file(PID, "soul.md", "aaaa\n")
    service.read_all(PID)
    other = make_service(data_dir, Database(os.path.join(data_dir, "app.db")))
    mtime = os.stat(disk(data_dir, "soul.md")).st_mtime_ns
    rev = other.write_file(PID, "soul.md", "bbbb\n")
    os.utime(disk(data_dir, "soul.md"), ns=(mtime, mtime))
    info = service.read_file_info(PID, "soul.md")
    assert (info.revision, info.content) == (rev, "bbbb\n")
    assert [r.author for r in service.history(PID, "soul.md")][:1] == ["user"]


def test_a_pending_revision_is_settled_even_when_the_file_is_remembered(service, data_dir, db):
    rev = service.write_file(PID, "memory.md", "committed\n")
    service.read_all(PID)
    db.conn().execute(
        "INSERT INTO cortex_revisions (persona_id, filename, author, content, sha256, chars, "
        "created_at, committed) VALUES (?, 'memory.md', 'ai', 'lost', 'x', 4, "
        "'2025-01-01T00:00:00.000Z', 0)", (PID,))
    (disk(data_dir).parent / ".memory.md.abc123.tmp").write_text("lost")
    info = service.read_file_info(PID, "memory.md")
    assert (info.revision, info.content) == (rev, "committed\n")
    assert db.conn().execute("SELECT COUNT(*) FROM cortex_revisions WHERE committed = 0"
                             ).fetchone()[0] == 0
    assert sorted(os.listdir(disk(data_dir).parent)) == sorted(CORTEX_FILES)


def test_a_deleted_persona_starts_afresh(service, data_dir):
    service.write_file(PID, "memory.md", "old life\n")
    service.read_all(PID)
    assert service.delete_cortex_dir(PID)
    assert "old life" not in service.read_file(PID, "memory.md")


def test_recently_changed_files_are_not_remembered(data_dir, db):
    service = make_service(data_dir, db, clock_offset=0)
    service.write_file(PID, "memory.md", "fresh\n")
    service.read_all(PID)
    assert len(content_queries(db, lambda: service.read_all(PID))) == len(CORTEX_FILES)


def test_remember_and_lookup_follow_the_signature(tmp_path):
    path = tmp_path / "f.md"
    path.write_text("x")
    st = os.stat(path)
    young = FileSnapshots(clock=lambda: st.st_ctime_ns + int(RACY_SECONDS * 1e9) - 1)
    young.remember(("p", "f.md"), st, "row")
    assert young.lookup(("p", "f.md"), st) is None
    settled = FileSnapshots(clock=lambda: st.st_ctime_ns + int(RACY_SECONDS * 1e9) + 1)
    settled.remember(("p", "f.md"), st, "row")
    assert settled.lookup(("p", "f.md"), st) == "row"
    os.chmod(path, 0o600)  # changes only the ctime
    assert settled.lookup(("p", "f.md"), os.stat(path)) is None
    settled.forget("p")
    assert settled.lookup(("p", "f.md"), st) is None


def test_a_kept_file_follows_its_signature_and_is_never_kept_while_young(tmp_path):
    """`KeptFile` (what secrets.json parses into, services/secrets.py) keeps the rule above:
    a file read within RACY_SECONDS of its last change is not kept, even though its stat
    would still match (a second change in the same clock tick could leave it as it was)."""
    path = tmp_path / "secrets.json"
    path.write_text("{}")
    st = os.stat(path)
    changed = max(st.st_mtime_ns, st.st_ctime_ns)
    young = KeptFile(clock=lambda: changed + int(RACY_SECONDS * 1e9) - 1)
    young.remember(st, {"kept": True})
    assert young.lookup(st) is None
    settled = KeptFile(clock=lambda: changed + int(RACY_SECONDS * 1e9) + 1)
    settled.remember(st, {"kept": True})
    assert settled.lookup(st) == {"kept": True}
    os.chmod(path, 0o600)  # changes only the ctime
    assert settled.lookup(os.stat(path)) is None
