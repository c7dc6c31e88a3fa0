"""CortexService on real files and real SQLite: templates, revisions, external edits, limits."""
import os
import sqlite3
import subprocess
import sys

import pytest

from src.utils.cortex import (
    CORTEX_FILES,
    CortexService,
    CortexSizeError,
    InvalidContent,
    RevisionConflict,
    RevisionNotFound,
)
from src.utils.models.settings import MemoryRunSettings
from src.utils.storage import Database, settings_store
from src.utils.storage.settings import set_setting

PID = "abcd1234"


@pytest.fixture
def db(data_dir):
    return Database(os.path.join(data_dir, "app.db"))


@pytest.fixture
def app_settings():
    return {"language": "en", "user_name": "Ada"}


@pytest.fixture
def service(data_dir, db, app_settings):
    return CortexService(str(data_dir), db, settings=lambda: MemoryRunSettings(**app_settings),
                         budget=100)


def disk(data_dir, filename, persona=PID):
    sub = "default" if persona == "default" else os.path.join("custom", persona)
    return (data_dir / "cortex" / sub / filename)


def authors(service, filename="memory.md", persona=PID):
    return [r.author for r in service.history(persona, filename)]


def revision_count(db):
    return db.conn().execute("SELECT COUNT(*) FROM cortex_revisions").fetchone()[0]


def test_files_are_created_lazily_from_english_templates(service, data_dir):
    assert not (data_dir / "cortex").exists()
    service.ensure_cortex_files(PID)
    for name in CORTEX_FILES:
        text = disk(data_dir, name).read_text(encoding="utf-8")
        assert service.read_file(PID, name) == text
        assert "{{user}}" not in text
        assert authors(service, name) == ["template"]
    assert disk(data_dir, "memory.md").read_text().startswith("# Memories\n")
    assert "Important details about Ada" in disk(data_dir, "memory.md").read_text()
    assert service.get_cortex_path(PID) == str(data_dir / "cortex" / "custom" / PID)
    assert service.get_cortex_path("default") == str(data_dir / "cortex" / "default")


def test_german_templates_and_neutral_user_word(service, data_dir, app_settings):
    app_settings.update(language="de", user_name="")
    memory = service.read_file(PID, "memory.md")
    assert memory.startswith("# Erinnerungen\n")
    assert "Wichtige Details über User" in memory
    assert service.read_file(PID, "soul.md").startswith("# Seelen-Entwicklung\n")
    assert "Beziehung zu User" in service.read_file(PID, "relationship.md")


def test_english_neutral_user_word(service, app_settings):
    app_settings.update(user_name=None)
    assert "my relationship with my conversation partner" in service.read_file(
        PID, "relationship.md")


def test_settings_callable_reading_the_database(data_dir, db):
    set_setting(db.conn(), "app", {"language": "de", "user_name": "Jo"})
    service = CortexService(str(data_dir), db,
                            settings=lambda: settings_store.memory_run_settings(db.conn()))
    assert "Dinge die Jo mir erzählt hat" in service.read_file("default", "memory.md")


def test_write_records_a_revision_and_returns_its_id(service, data_dir):
    base = service.read_file_info(PID, "memory.md")
    rev = service.write_file(PID, "memory.md", "# Memories\nAda likes tea.\n", author="ai",
                             job_id="job7", message_range=(3, 9), summary="tea")
    assert rev > base.revision
    assert disk(data_dir, "memory.md").read_text() == "# Memories\nAda likes tea.\n"
    newest = service.history(PID, "memory.md")[0]
    assert newest.rev == rev and newest.author == "ai" and newest.job_id == "job7"
    assert (newest.message_from, newest.message_to, newest.summary) == (3, 9, "tea")
    assert newest.chars == len("# Memories\nAda likes tea.\n")
    assert newest.created_at.endswith("Z")
    info = service.read_file_info(PID, "memory.md")
    assert info.model_dump() == {"filename": "memory.md", "content": "# Memories\nAda likes tea.\n",
                              "revision": rev, "chars": 26, "budget": 100, "version": 2}


def test_unchanged_content_creates_no_revision(service, db):
    rev = service.write_file(PID, "soul.md", "same\n")
    count = revision_count(db)
    assert service.write_file(PID, "soul.md", "same\n", expected_revision=rev) == rev
    assert service.edit_file(PID, "soul.md", lambda text: text) == rev
    assert revision_count(db) == count


def test_stale_expected_revision_raises_conflict_and_writes_nothing(service, data_dir, db):
    first = service.write_file(PID, "memory.md", "one\n")
    service.write_file(PID, "memory.md", "two\n")
    count = revision_count(db)
    with pytest.raises(RevisionConflict) as caught:
        service.write_file(PID, "memory.md", "three\n", expected_revision=first)
    assert caught.value.current.content == "two\n"
    assert caught.value.current.revision == service.read_file_info(PID, "memory.md").revision
    with pytest.raises(RevisionConflict):
        service.edit_file(PID, "memory.md", lambda t: t + "x", expected_revision=first)
    assert disk(data_dir, "memory.md").read_text() == "two\n"
    assert revision_count(db) == count


def test_edit_file_transforms_current_text(service):
    service.write_file(PID, "memory.md", "a\n")
    service.edit_file(PID, "memory.md", lambda t: t.replace("a", "b") + "c\n", author="ai")
    assert service.read_file(PID, "memory.md") == "b\nc\n"
    assert authors(service)[:2] == ["ai", "user"]


def test_edit_file_failing_transform_writes_nothing(service, db):
    service.write_file(PID, "memory.md", "a\n")
    count = revision_count(db)

    def broken(text):
        raise KeyError("old_str not found")

    with pytest.raises(KeyError):
        service.edit_file(PID, "memory.md", broken)
    with pytest.raises(InvalidContent):
        service.edit_file(PID, "memory.md", lambda t: None)
    assert service.read_file(PID, "memory.md") == "a\n"
    assert revision_count(db) == count


def test_soft_budget_is_allowed_and_hard_cap_refused(service, data_dir, db):
    over_budget = "x" * 150
    service.write_file(PID, "memory.md", over_budget)
    assert service.read_file_info(PID, "memory.md").chars == 150
    at_cap = "y" * 400
    service.write_file(PID, "memory.md", at_cap)
    count = revision_count(db)
    with pytest.raises(CortexSizeError) as caught:
        service.write_file(PID, "memory.md", "z" * 401)
    assert (caught.value.chars, caught.value.limit) == (401, 400)
    with pytest.raises(CortexSizeError):
        service.edit_file(PID, "memory.md", lambda t: t + "!")
    assert disk(data_dir, "memory.md").read_text() == at_cap
    assert revision_count(db) == count


def test_hard_cap_refusal_creates_nothing_for_a_new_persona(service, data_dir):
    with pytest.raises(CortexSizeError):
        service.write_file(PID, "memory.md", "z" * 401)
    assert not (data_dir / "cortex").exists()


@pytest.mark.parametrize("content", [None, 5, b"bytes", ["x"], "bad \ud800 surrogate"])
def test_content_must_be_storable_text(service, content):
    with pytest.raises(InvalidContent):
        service.write_file(PID, "memory.md", content)


def test_unknown_author_is_refused(service):
    with pytest.raises(ValueError):
        service.write_file(PID, "memory.md", "x", author="robot")


def test_external_edit_is_recorded_on_read(service, data_dir):
    service.write_file(PID, "memory.md", "mine\n")
    disk(data_dir, "memory.md").write_text("edited in vim\n", encoding="utf-8")
    assert service.read_file(PID, "memory.md") == "edited in vim\n"
    newest = service.history(PID, "memory.md")[0]
    assert newest.author == "external"
    assert service.get_revision(PID, "memory.md", newest.rev).content == "edited in vim\n"
    assert service.read_file(PID, "memory.md") == "edited in vim\n"
    assert authors(service).count("external") == 1


def test_external_edit_is_recorded_before_a_write_overwrites_it(service, data_dir):
    base = service.write_file(PID, "memory.md", "mine\n")
    disk(data_dir, "memory.md").write_bytes(b"outside\r\nedit\r\n")
    with pytest.raises(RevisionConflict) as caught:
        service.write_file(PID, "memory.md", "stale view\n", expected_revision=base)
    assert caught.value.current.content == "outside\r\nedit\r\n"
    service.write_file(PID, "memory.md", "new\n")
    history = service.history(PID, "memory.md")
    assert [r.author for r in history[:3]] == ["user", "external", "user"]
    assert service.get_revision(PID, "memory.md", history[1].rev).content == \
        "outside\r\nedit\r\n"


def test_invalid_utf8_on_disk_is_kept_readable(service, data_dir):
    service.ensure_cortex_files(PID)
    disk(data_dir, "soul.md").write_bytes(b"caf\xe9\n")
    assert service.read_file(PID, "soul.md") == "caf\ufffd\n"
    assert authors(service, "soul.md")[0] == "external"
    assert disk(data_dir, "soul.md").read_bytes() == "caf\ufffd\n".encode()
    assert authors(service, "soul.md").count("external") == 1


def test_file_deleted_on_disk_comes_back_from_its_last_revision(service, data_dir, db):
    service.write_file(PID, "memory.md", "keep me\n")
    count = revision_count(db)
    disk(data_dir, "memory.md").unlink()
    assert service.read_file(PID, "memory.md") == "keep me\n"
    assert disk(data_dir, "memory.md").read_text() == "keep me\n"
    assert revision_count(db) == count


def test_existing_files_without_revisions_are_adopted(data_dir, db, service):
    directory = data_dir / "cortex" / "custom" / PID
    directory.mkdir(parents=True)
    (directory / "memory.md").write_text("from a backup\n")
    assert service.read_file(PID, "memory.md") == "from a backup\n"
    assert authors(service) == ["external"]
    assert authors(service, "soul.md") == ["template"]


def test_read_error_returns_empty_string_and_is_logged(service, data_dir, caplog):
    service.ensure_cortex_files(PID)
    path = disk(data_dir, "memory.md")
    path.unlink()
    path.mkdir()
    assert service.read_file(PID, "memory.md") == ""
    assert "Could not read cortex file" in caplog.text
    with pytest.raises(OSError):
        service.write_file(PID, "memory.md", "x")


def test_history_diff_restore_and_reset(service, app_settings):
    template = service.read_file(PID, "memory.md")
    first = service.write_file(PID, "memory.md", "line 1\nline 2\n")
    second = service.write_file(PID, "memory.md", "line 1\nline two\nline 3\n")
    history = service.history(PID, "memory.md")
    assert [r.rev for r in history] == sorted((r.rev for r in history), reverse=True)
    assert set(history[0].model_dump()) >= {"rev", "author", "created_at", "summary", "sha256",
                                            "job_id", "chars"}
    detail = service.get_revision(PID, "memory.md", second)
    assert detail.content == "line 1\nline two\nline 3\n"
    assert detail.previous_rev == first
    assert detail.diff.splitlines() == [
        f"--- memory.md@{first}", f"+++ memory.md@{second}", "@@ -1,2 +1,3 @@", " line 1",
        "-line 2", "+line two", "+line 3"]
    oldest = service.get_revision(PID, "memory.md", history[-1].rev)
    assert oldest.previous_rev is None and oldest.diff.startswith("--- /dev/null")

    restored = service.restore(PID, "memory.md", first)
    assert service.read_file(PID, "memory.md") == "line 1\nline 2\n"
    newest = service.history(PID, "memory.md")[0]
    assert (newest.rev, newest.author, newest.summary) == (
        restored, "restore", f"Restored revision {first}")
    with pytest.raises(RevisionConflict):
        service.restore(PID, "memory.md", second, expected_revision=second)

    app_settings.update(language="de")
    reset = service.reset(PID, "memory.md", expected_revision=restored)
    assert service.read_file(PID, "memory.md").startswith("# Erinnerungen")
    assert service.history(PID, "memory.md")[0].author == "template"
    assert service.restore(PID, "memory.md", history[-1].rev, expected_revision=reset) > reset
    assert service.read_file(PID, "memory.md") == template


def test_revisions_are_scoped_to_their_persona_and_file(service):
    rev = service.write_file(PID, "memory.md", "x\n")
    for persona, filename, number in [(PID, "soul.md", rev), ("default", "memory.md", rev),
                                      (PID, "memory.md", 10 ** 9), (PID, "memory.md", 2 ** 70),
                                      (PID, "memory.md", 0), (PID, "memory.md", "1"),
                                      (PID, "memory.md", True)]:
        with pytest.raises(RevisionNotFound):
            service.get_revision(persona, filename, number)
        with pytest.raises(RevisionNotFound):
            service.restore(persona, filename, number)


def test_read_all_and_prompt_values(service):
    service.write_file(PID, "memory.md", "\n  remembered  \n\n")
    files = service.read_all(PID)
    assert set(files) == {"memory", "soul", "relationship"}
    assert files["memory"] == "\n  remembered  \n\n"
    prompt = service.get_cortex_for_prompt(PID)
    assert prompt["cortex_memory"] == "remembered"
    assert prompt["cortex_soul"] == files["soul"].strip()
    assert set(prompt) == {"cortex_memory", "cortex_soul", "cortex_relationship"}
    assert [f.filename for f in service.read_all_info(PID)] == list(CORTEX_FILES)


def test_delete_cortex_dir_removes_files_and_revisions(service, data_dir, db):
    service.write_file(PID, "memory.md", "bye\n")
    service.ensure_cortex_files("default")
    assert service.delete_cortex_dir(PID) is True
    assert not (data_dir / "cortex" / "custom" / PID).exists()
    assert db.conn().execute("SELECT COUNT(*) FROM cortex_revisions WHERE persona_id = ?",
                             (PID,)).fetchone()[0] == 0
    assert service.delete_cortex_dir(PID) is False
    assert service.delete_cortex_dir("default") is False
    assert (data_dir / "cortex" / "default" / "memory.md").exists()
    assert authors(service, persona="default") == ["template"]


def test_lock_is_reentrant_and_excludes_other_processes(service, data_dir):
    probe = ("import fcntl, os, sys\n"
             "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
             "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('free')\n"
             "except BlockingIOError:\n    print('busy')\n")
    lock_file = str(data_dir / "cortex" / ".locks" / f"{PID}.lock")

    def other_process_sees() -> str:
        return subprocess.run([sys.executable, "-c", probe, lock_file], capture_output=True,
                              text=True, timeout=20, check=True).stdout.strip()

    with service.lock(PID):
        with service.lock(PID):
            service.write_file(PID, "memory.md", "inside both\n")
            assert other_process_sees() == "busy"
        assert other_process_sees() == "busy"
    assert other_process_sees() == "free"


def test_a_killed_writers_pending_revision_is_settled(service, data_dir, db):
    """What a crash between the pending row and the rename leaves behind is cleaned up."""
    rev = service.write_file(PID, "memory.md", "committed\n")
    conn = db.conn()
    conn.execute("INSERT INTO cortex_revisions (persona_id, filename, author, content, sha256, "
                 "chars, created_at, committed) VALUES (?, 'memory.md', 'ai', 'lost', 'x', 4, "
                 "'2025-01-01T00:00:00.000Z', 0)", (PID,))
    (disk(data_dir, "memory.md").parent / ".memory.md.abc123.tmp").write_text("lost")
    info = service.read_file_info(PID, "memory.md")
    assert (info.revision, info.content) == (rev, "committed\n")
    assert conn.execute("SELECT COUNT(*) FROM cortex_revisions WHERE committed = 0").fetchone()[0] \
        == 0
    assert sorted(os.listdir(disk(data_dir, "memory.md").parent)) == sorted(CORTEX_FILES)
    assert "external" not in authors(service)


def test_schema_rejects_unknown_authors_and_files(db):
    with pytest.raises(sqlite3.IntegrityError):
        db.conn().execute("INSERT INTO cortex_revisions (persona_id, filename, author, content, "
                          "sha256, chars, created_at) VALUES ('default', 'x.md', 'user', '', "
                          "'', 0, '')")
