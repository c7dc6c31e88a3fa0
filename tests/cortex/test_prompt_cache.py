"""The cortex texts of chat prompts: reused while nothing changed, read again after any change."""
import os
import sqlite3
import time
from contextlib import closing

import pytest

from src.utils.cortex import CortexService
from src.utils.cortex.prompt_cache import PromptTexts
from src.utils.models.settings import MemoryRunSettings
from src.utils.storage import Database, generations

PID = "prmt0001"
LATER = 10 ** 12  # a clock 1000 s ahead: every file on disk counts as settled, so it is remembered


@pytest.fixture
def db(data_dir):
    return Database(os.path.join(data_dir, "app.db"))


def make_service(data_dir, db, clock_offset=LATER):
    return CortexService(str(data_dir), db, settings=lambda: MemoryRunSettings(language="en"),
                         prompt_texts=PromptTexts(clock=lambda: time.time_ns() + clock_offset))


@pytest.fixture
def service(data_dir, db):
    service = make_service(data_dir, db)
    service.write_file(PID, "memory.md", "Lena rows on the Elbe.")
    return service


def statements(db, action):
    """The SQL statements `action` ran on this thread's connection, and its result."""
    seen: list[str] = []
    db.conn().set_trace_callback(seen.append)
    try:
        result = action()
    finally:
        db.conn().set_trace_callback(None)
    return seen, result


def memory_of(texts):
    return next((content, revision) for name, content, revision in texts
                if name == "memory.md")


def test_unchanged_files_are_served_from_memory_with_one_query(service, db):
    first = service.prompt_texts(PID)
    seen, second = statements(db, lambda: service.prompt_texts(PID))
    assert second == first
    assert memory_of(second)[0] == "Lena rows on the Elbe."
    assert len(seen) == 1 and "MAX(id)" in seen[0]


def test_a_revision_written_through_the_service_is_in_the_next_prompt(service):
    service.prompt_texts(PID)
    rev = service.write_file(PID, "memory.md", "Lena sails now.")
    assert memory_of(service.prompt_texts(PID)) == ("Lena sails now.", rev)


def test_a_revision_written_by_another_process_is_in_the_next_prompt(service, data_dir, db):
    service.prompt_texts(PID)
    other = make_service(data_dir, Database(os.path.join(data_dir, "app.db")))
    try:
        rev = other.write_file(PID, "memory.md", "Lena rows on the Alster.")  # same length
    finally:
        other.db.close()
    assert memory_of(service.prompt_texts(PID)) == ("Lena rows on the Alster.", rev)


def test_a_file_edited_on_disk_is_in_the_next_prompt_as_an_external_revision(service, data_dir,
                                                                              db):
    before = memory_of(service.prompt_texts(PID))[1]
    path = data_dir / "cortex" / "custom" / PID / "memory.md"
    path.write_text("Lena rows on the Spree.", encoding="utf-8")
    content, revision = memory_of(service.prompt_texts(PID))
    assert content == "Lena rows on the Spree." and revision != before
    author = db.conn().execute("SELECT author FROM cortex_revisions WHERE id = ?",
                               (revision,)).fetchone()[0]
    assert author == "external"


def test_files_changed_within_a_clock_tick_are_read_again(data_dir, db):
    service = make_service(data_dir, db, clock_offset=0)
    service.write_file(PID, "memory.md", "Just written.")
    service.prompt_texts(PID)
    seen, texts = statements(db, lambda: service.prompt_texts(PID))
    assert memory_of(texts)[0] == "Just written."
    assert len(seen) > 1  # read the regular way, not from memory


def test_under_an_unchanged_cortex_counter_the_revision_ids_are_not_queried(service, db):
    """The chat reads the `cortex` change counter first (storage/generations.py) and passes
    it: while it stands, only the files' `stat`s are compared."""
    counter = generations.read(db.conn()).cortex
    first = service.prompt_texts(PID, counter)
    seen, second = statements(db, lambda: service.prompt_texts(PID, counter))
    assert second == first and seen == []


def test_a_revision_row_another_process_wrote_moves_the_counter_and_is_noticed(service, data_dir,
                                                                                db):
    """A pending row (a writer that died between its row and its file) changes no file: only
    the counter its insert raised tells the next prompt to look at the rows again."""
    counter = generations.read(db.conn()).cortex
    service.prompt_texts(PID, counter)
    with closing(sqlite3.connect(data_dir / "app.db")) as other:
        other.execute("INSERT INTO cortex_revisions (persona_id, filename, author, content, "
                      "sha256, chars, created_at, committed) VALUES (?, 'memory.md', 'user', "
                      "'Lena swims.', 'x', 11, '2026-01-01T00:00:00Z', 0)", (PID,))
        other.commit()
    moved = generations.read(db.conn()).cortex
    assert moved == counter + 1
    seen, texts = statements(db, lambda: service.prompt_texts(PID, moved))
    assert any("MAX(id)" in statement for statement in seen)
    assert memory_of(texts)[0] == "Lena rows on the Elbe."  # the disk never got it: dropped
