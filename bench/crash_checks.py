"""The invariants bench/crash_loop.py checks after every restart, read straight from the data dir.

Each check returns a list of findings (empty means it holds). Files are compared under the
persona's cortex lock (the same `flock` the app takes), so no writer of the running server is
caught half-way.
"""
import fcntl
import os
import re
import sqlite3
import time
from collections import Counter
from contextlib import closing, contextmanager

from src.utils.cortex.ownership import owner_alive, owners_dir
from src.utils.cortex.paths import CORTEX_FILES, CortexPaths

FACT = re.compile(r"FACT-[0-9a-f]{12}")


def connect(data_dir: str) -> sqlite3.Connection:
    """A read connection to the app's database (WAL, so it never blocks the server)."""
    conn = sqlite3.connect(os.path.join(data_dir, "app.db"), timeout=30)
    conn.row_factory = sqlite3.Row
    return conn


@contextmanager
def persona_lock(data_dir: str, persona_id: str):
    """Holds the persona's cortex lock, as the app's writers do."""
    lock_dir = CortexPaths(data_dir).lock_dir
    os.makedirs(lock_dir, exist_ok=True)
    fd = os.open(os.path.join(lock_dir, f"{persona_id}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def persona_dirs(data_dir: str) -> list[str]:
    """Every persona id with a cortex directory on disk."""
    custom = os.path.join(CortexPaths(data_dir).root, "custom")
    found = os.listdir(custom) if os.path.isdir(custom) else []
    return ["default"] + sorted(found)


def torn_files(data_dir: str) -> list[str]:
    """Cortex files whose bytes are no recorded revision (committed or pending) of that file."""
    findings = []
    paths = CortexPaths(data_dir)
    for persona_id in persona_dirs(data_dir):
        with persona_lock(data_dir, persona_id), closing(connect(data_dir)) as conn:
            for name in CORTEX_FILES:
                path = os.path.join(paths.persona_dir(persona_id), name)
                try:
                    with open(path, "rb") as handle:
                        data = handle.read()
                except FileNotFoundError:
                    continue
                known = conn.execute("SELECT 1 FROM cortex_revisions WHERE persona_id = ? AND "
                                     "filename = ? AND CAST(content AS BLOB) = ? LIMIT 1",
                                     (persona_id, name, data)).fetchone()
                if known is None:
                    findings.append(f"{persona_id}/{name}")
    return findings


def lost_writes(data_dir: str, chats: list, puts: list, deleted: set) -> list[str]:
    """Acknowledged chat turns and cortex PUTs that are not stored (or no longer current)."""
    findings = []
    with closing(connect(data_dir)) as conn:
        stored = {(r["session_id"], r["content"]) for r in conn.execute(
            "SELECT session_id, content FROM messages WHERE role = 'user'")}
        ids = {r[0] for r in conn.execute("SELECT id FROM messages WHERE role = 'assistant'")}
        findings += [f"chat {text}" for session_id, text, reply_id in chats
                     if (session_id, text) not in stored or reply_id not in ids]
        for persona_id, tag, rev in puts:
            if persona_id in deleted:
                continue
            row = conn.execute("SELECT 1 FROM cortex_revisions WHERE id = ? AND committed = 1",
                               (rev,)).fetchone()
            if row is None or tag not in _current(conn, persona_id, "memory.md"):
                findings.append(f"put {persona_id} {tag}")
    return findings


def resurrected(data_dir: str, deleted: set) -> list[str]:
    """Personas whose DELETE answered 200 but whose row, files or revisions exist."""
    findings = []
    paths = CortexPaths(data_dir)
    with closing(connect(data_dir)) as conn:
        for persona_id in sorted(deleted):
            traces = [what for what, sql in (
                ("row", "SELECT 1 FROM personas WHERE id = ?"),
                ("revisions", "SELECT 1 FROM cortex_revisions WHERE persona_id = ?"),
                ("sessions", "SELECT 1 FROM sessions WHERE persona_id = ?"),
            ) if conn.execute(sql, (persona_id,)).fetchone()]
            if os.path.exists(paths.persona_dir(persona_id)):
                traces.append("directory")
            if traces:
                findings.append(f"{persona_id}: {', '.join(traces)}")
    return findings


def stuck_jobs(data_dir: str, grace: float = 5.0) -> list[str]:
    """Jobs still `running` `grace` seconds after start-up whose owner is dead or whose lease
    ran out (the server's own recovery had that long to fail them)."""
    deadline = time.monotonic() + grace
    while True:
        with closing(connect(data_dir)) as conn:
            rows = conn.execute("SELECT id, owner, lease_until FROM cortex_jobs "
                                "WHERE status = 'running'").fetchall()
        stuck = [r["id"] for r in rows if not owner_alive(owners_dir(data_dir), r["owner"])
                 or (r["lease_until"] or 0) < time.time()]
        if not stuck or time.monotonic() > deadline:
            return stuck
        time.sleep(0.1)


def duplicated_facts(data_dir: str) -> list[str]:
    """Facts that appear more than once in a persona's memory.md."""
    findings = []
    with closing(connect(data_dir)) as conn:
        personas = [r[0] for r in conn.execute("SELECT DISTINCT persona_id FROM cortex_revisions")]
        for persona_id in personas:
            counts = Counter(FACT.findall(_current(conn, persona_id, "memory.md")))
            findings += [f"{persona_id} {fact} x{n}" for fact, n in counts.items() if n > 1]
    return findings


def unprocessed_ranges(data_dir: str) -> list[str]:
    """Personas with an applied update revision beyond their processed mark."""
    with closing(connect(data_dir)) as conn:
        rows = conn.execute(
            "SELECT r.persona_id, MAX(r.message_to) AS applied, "
            "COALESCE(s.last_processed_id, 0) AS processed FROM cortex_revisions r "
            "LEFT JOIN cortex_state s ON s.persona_id = r.persona_id "
            "WHERE r.author = 'ai' AND r.committed = 1 AND r.message_to IS NOT NULL "
            "GROUP BY r.persona_id").fetchall()
    return [f"{r['persona_id']}: applied {r['applied']} > processed {r['processed']}"
            for r in rows if r["applied"] > r["processed"]]


def _current(conn, persona_id: str, filename: str) -> str:
    row = conn.execute("SELECT content FROM cortex_revisions WHERE persona_id = ? AND "
                       "filename = ? AND committed = 1 ORDER BY id DESC LIMIT 1",
                       (persona_id, filename)).fetchone()
    return row[0] if row else ""


def job_stats(data_dir: str) -> dict:
    """Update jobs by outcome, and how many applied groups of revisions exist."""
    with closing(connect(data_dir)) as conn:
        rows = conn.execute("SELECT status, COALESCE(error, '') AS error, COUNT(*) AS n "
                            "FROM cortex_jobs GROUP BY status, error").fetchall()
        groups = conn.execute("SELECT COUNT(DISTINCT job_id) FROM cortex_revisions "
                              "WHERE author = 'ai' AND committed = 1").fetchone()[0]
    stats = {f"jobs_{r['status']}" + (f"_{r['error']}" if r["error"] else ""): r["n"]
             for r in rows}
    with open(os.path.join(data_dir, "server.log"), errors="replace") as log:
        text = log.read()
    return {**stats, "update_groups_applied": groups,
            "groups_completed_after_a_crash": text.count("completed a group of edits "
                                                         "interrupted by a crash")}
