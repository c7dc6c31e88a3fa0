"""Helpers for the backup tests: running the CLI, checking a restored data directory."""
import hashlib
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(data_dir, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m src.app ARGS` with PERSONA_DATA_DIR set, as a person would run it."""
    env = {**os.environ, "PERSONA_DATA_DIR": str(data_dir), "PERSONA_LOG_LEVEL": "WARNING"}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "src.app", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def check_consistent(data_dir) -> int:
    """Asserts `PRAGMA integrity_check` is ok and every cortex file equals the newest committed
    revision of its file in the database; returns how many files were checked."""
    data_dir = Path(data_dir)
    checked = 0
    with closing(sqlite3.connect(data_dir / "app.db")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for path in sorted((data_dir / "cortex").rglob("*.md")):
            parts = path.relative_to(data_dir / "cortex").parts
            persona_id = "default" if parts[0] == "default" else parts[1]
            row = conn.execute(
                "SELECT sha256 FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
                "AND committed = 1 ORDER BY id DESC LIMIT 1", (persona_id, path.name)).fetchone()
            assert row is not None, path
            assert hashlib.sha256(path.read_bytes()).hexdigest() == row[0], path
            checked += 1
    return checked
