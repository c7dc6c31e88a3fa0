"""Crash safety: a writer SIGKILLed at random moments never leaves a torn or unrecorded file."""
import os
import random
import signal
import sqlite3
import time
from contextlib import closing

from src.utils.cortex import CORTEX_FILES, CortexService
from src.utils.storage import Database
from tests.cortex.support import Lines, spawn

PID = "crash0001"
KILLS = 30
MAX_KILLS = 300  # keep killing (past KILLS) until a kill has landed inside a write


def _all_revisions(db_path: str) -> dict:
    """Every row, committed or not, by file: what a killed writer may have left on disk."""
    with closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute("SELECT filename, content, committed FROM cortex_revisions "
                            "WHERE persona_id = ?", (PID,)).fetchall()
    found: dict = {name: {} for name in CORTEX_FILES}
    for filename, content, committed in rows:
        found[filename][content] = committed
    return found


def _assert_whole(text: str) -> None:
    if text.startswith("BEGIN "):
        serial = text.split("\n", 1)[0].split()[1]
        assert text.endswith(f"\nEND {serial}\n"), "torn file"


def test_sigkill_during_writes_leaves_only_complete_revisions(data_dir):
    rng = random.Random(20250131)
    db_path = os.path.join(data_dir, "app.db")
    directory = data_dir / "cortex" / "custom" / PID
    service = CortexService(str(data_dir), Database(db_path))
    interrupted = round_number = 0
    while round_number < KILLS or (interrupted == 0 and round_number < MAX_KILLS):
        round_number += 1
        with spawn("crash", str(data_dir), PID, str(round_number)) as proc:
            lines = Lines(proc)
            for _ in range(rng.randint(1, 6)):
                assert lines.next().startswith("rev ")
            # Not a wait for anything: the kill must land at a random point of the write cycle
            # (a write takes about 2 ms), not always just after the child printed its line.
            time.sleep(rng.uniform(0, 0.004))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=20)
            assert proc.returncode == -signal.SIGKILL

        revisions = _all_revisions(db_path)
        left_behind = [n for n in os.listdir(directory) if n not in CORTEX_FILES]
        assert all(n.startswith(".") and n.endswith(".tmp") for n in left_behind), left_behind
        for name in CORTEX_FILES:
            text = (directory / name).read_bytes().decode("utf-8")
            _assert_whole(text)
            assert text in revisions[name], f"round {round_number}: {name} is no revision"
        if left_behind or any(0 in r.values() for r in revisions.values()):
            interrupted += 1

        for info in service.read_all_info(PID):
            assert info.content == (directory / info.filename).read_text(encoding="utf-8")
            assert info.revision == service.history(PID, info.filename)[0].rev
        assert sorted(os.listdir(directory)) == sorted(CORTEX_FILES)
        with closing(sqlite3.connect(db_path)) as conn:
            leftovers = conn.execute("SELECT COUNT(*) FROM cortex_revisions WHERE committed = 0 "
                                     "OR author = 'external'").fetchone()[0]
        assert leftovers == 0, "a crash was recovered as an external edit or left pending"
    assert interrupted > 0, "no kill landed inside a write; the test proved nothing"
