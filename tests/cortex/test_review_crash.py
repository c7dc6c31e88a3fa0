"""SIGKILL while a proposal is accepted: afterwards the proposal is accepted exactly when its
revisions are visible, and every file equals a recorded revision."""
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

from src.app import create_app
from src.utils import provider
from src.utils.cortex import CORTEX_FILES
from src.utils.storage.personas import create_persona
from tests.cortex.support import REPO, Lines

PID = "anna0001"
KILLS = 12


def _rows(db_path, sql, *params):
    with closing(sqlite3.connect(db_path)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql, params)]


def test_sigkill_during_accept_is_all_or_nothing(app_config, data_dir):
    app = create_app(app_config)
    create_persona(provider.get_db(app).conn(), PID, {"name": "Anna"})
    provider.get_cortex_service(app).ensure_cortex_files(PID)
    provider.shutdown_services(app)
    rng, db_path = random.Random(16), data_dir / "app.db"
    mid_accept = 0
    for round_number in range(KILLS):
        proc = subprocess.Popen([sys.executable, "-m", "tests.cortex.review_child",
                                 str(data_dir), PID, str(round_number)], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        try:
            lines = Lines(proc)
            for _ in range(rng.randint(1, 4)):
                assert lines.next().startswith(("proposed ", "accepted "))
            # Not a wait for anything: the kill must land at a random point of an accept.
            time.sleep(rng.uniform(0, 0.01))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=20)
        finally:
            proc.stdout.close()
            proc.stderr.close()

        mid_accept += bool(_rows(db_path, "SELECT id FROM cortex_changesets")
                           or _rows(db_path, "SELECT id FROM cortex_proposals WHERE "
                                    "status = 'pending'"))
        restarted = create_app(app_config)
        try:
            cortex = provider.get_cortex_service(restarted)
            infos = {f.filename: f for f in cortex.read_all_info(PID)}
        finally:
            provider.shutdown_services(restarted)
        directory = data_dir / "cortex" / "custom" / PID
        for name in CORTEX_FILES:
            assert (directory / name).read_text(encoding="utf-8") == infos[name].content
        assert _rows(db_path, "SELECT id FROM cortex_changesets") == []
        assert _rows(db_path, "SELECT id FROM cortex_revisions WHERE committed = 0") == []
        for proposal in _rows(db_path, "SELECT id, status FROM cortex_proposals"):
            revs = _rows(db_path, "SELECT filename FROM cortex_revisions WHERE proposal_id = ? "
                         "AND committed = 1", proposal["id"])
            files = _rows(db_path, "SELECT status, revision FROM cortex_proposal_files WHERE "
                          "proposal_id = ?", proposal["id"])
            if proposal["status"] == "accepted":
                assert len(revs) == 2 and all(f["revision"] for f in files), proposal
            else:
                assert proposal["status"] == "pending" and revs == [], proposal
    assert mid_accept > 0, "no kill landed between proposing and accepting; nothing was proven"
