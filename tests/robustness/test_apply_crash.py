"""SIGKILL while a group of staged cortex edits is applied (issue 9 §3): after recovery every file
is its newest recorded revision, and a group's message range is processed exactly when its
revisions exist, all of them."""
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

from src.utils.cortex import CORTEX_FILES, CortexService
from src.utils.storage import Database, cortex_jobs as jobs
from src.utils.storage.personas import create_persona
from tests.cortex.support import REPO, Lines
from tests.robustness.apply_child import group_files

PID = "crash0001"
KILLS = 25
MID_APPLY = 5  # keep killing (past KILLS) until this many kills landed inside an apply
MAX_KILLS = 300


def _rows(db_path: str, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute(sql).fetchall()


def _assert_consistent(data_dir, db_path: str) -> None:
    assert _rows(db_path, "SELECT * FROM cortex_changesets") == []
    assert _rows(db_path, "SELECT id FROM cortex_revisions WHERE committed = 0") == []
    assert _rows(db_path, "SELECT id FROM cortex_revisions WHERE author = 'external'") == []
    directory = data_dir / "cortex" / "custom" / PID
    for name in CORTEX_FILES:
        ((newest,),) = _rows(db_path, "SELECT content FROM cortex_revisions WHERE persona_id = "
                                      f"'{PID}' AND filename = '{name}' ORDER BY id DESC LIMIT 1")
        assert (directory / name).read_text(encoding="utf-8") == newest, f"{name} is torn"
    with closing(sqlite3.connect(db_path)) as conn:
        processed = jobs.last_processed_id(conn, PID)
    groups: dict[int, list[str]] = {}
    for serial, filename in _rows(db_path, "SELECT message_to, filename FROM cortex_revisions "
                                           "WHERE author = 'ai' ORDER BY id"):
        groups.setdefault(serial, []).append(filename)
    for serial, files in groups.items():
        assert sorted(files) == group_files(serial), f"group {serial} is partial: {files}"
        assert serial <= processed, f"group {serial} applied, its range unprocessed"
    assert processed == 0 or processed in groups, "range processed without its revisions"


def test_sigkill_while_applying_groups_never_splits_one(data_dir):
    rng = random.Random(20251125)
    db_path = os.path.join(data_dir, "app.db")
    database = Database(db_path)
    create_persona(database.conn(), PID, {"name": "Crash"})
    CortexService(str(data_dir), database).ensure_cortex_files(PID)
    mid_apply = round_number = 0
    while round_number < KILLS or (mid_apply < MID_APPLY and round_number < MAX_KILLS):
        round_number += 1
        with subprocess.Popen([sys.executable, "-m", "tests.robustness.apply_child",
                               str(data_dir), PID, str(round_number)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as proc:
            lines = Lines(proc)
            for _ in range(rng.randint(1, 4)):
                assert lines.next().startswith("applied ")
            # Not a wait for anything: the kill must land at a random point of an apply (one
            # takes a few ms), not always just after the child printed its line.
            time.sleep(rng.uniform(0, 0.006))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=20)
            assert proc.returncode == -signal.SIGKILL
        if _rows(db_path, "SELECT id FROM cortex_changesets"):
            mid_apply += 1
        CortexService(str(data_dir), Database(db_path)).recover_staged()  # as at start-up
        _assert_consistent(data_dir, db_path)
    assert mid_apply >= MID_APPLY, "too few kills landed inside an apply; the test proved little"

