"""The newest revision id of each cortex file, which every chat turn's cached cortex texts are
checked against (`cortex/prompt_cache.py`): pending rows count, other personas' do not, a file
without rows has none; and it is found with seeks at the end of the index, so a persona with
thousands of revisions costs a turn no more than a new one."""
import os
import random

import pytest

from src.utils.storage import Database
from src.utils.storage.cortex_revisions import newest_ids

FILES = ("memory.md", "soul.md", "relationship.md")


@pytest.fixture
def conn(data_dir):
    db = Database(os.path.join(data_dir, "app.db"))
    db.open()
    yield db.conn()
    db.close_thread()


def _add(conn, persona: str, filename: str, committed: int) -> None:
    conn.execute("INSERT INTO cortex_revisions (persona_id, filename, author, content, sha256, "
                 "chars, created_at, committed) VALUES (?, ?, 'ai', 'x', 's', 1, '', ?)",
                 (persona, filename, committed))


def _reference(conn, persona: str) -> tuple:
    rows = dict(conn.execute("SELECT filename, MAX(id) FROM cortex_revisions "
                             "WHERE persona_id = ? GROUP BY filename", (persona,)).fetchall())
    return tuple(rows.get(name) for name in FILES)


def test_newest_ids_match_every_row_of_the_persona(conn):
    assert newest_ids(conn, "nwst0001", FILES) == (None, None, None)
    pick = random.Random(7)
    for _ in range(300):
        _add(conn, pick.choice(["nwst0001", "nwst0002"]), pick.choice(FILES[:2]),
             pick.choice([0, 1, 1]))
        for persona in ("nwst0001", "nwst0002"):
            assert newest_ids(conn, persona, FILES) == _reference(conn, persona)
    assert newest_ids(conn, "nwst0001", FILES)[2] is None  # relationship.md has no row


def test_newest_ids_seek_instead_of_scanning_the_persona_s_revisions(conn):
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        newest_ids(conn, "nwst0001", FILES)
    finally:
        conn.set_trace_callback(None)
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + seen[0]).fetchall()]
    searches = [step for step in plan if "cortex_revisions" in step]
    assert len(searches) == 6, plan
    assert all("committed=?" in step for step in searches), plan
