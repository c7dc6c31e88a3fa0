"""SQLite store for cortex revisions (table `cortex_revisions`, migration 0003).

Readers see committed rows only. A writer inserts its row uncommitted, replaces the file, then
commits the row; `pending_revisions` lets the next lock holder settle what a killed writer left.
"""
import hashlib
import sqlite3

from ..models.cortex import Revision, RevisionDetail, RevisionSource
from . import provenance
from .clock import utc_now

AUTHORS = ("user", "ai", "template", "restore", "external")
_COLUMNS = ("id, persona_id, filename, author, sha256, chars, created_at, job_id, "
            "message_from, message_to, summary, proposal_id, review, reverts")


def sha256_of(data: str | bytes) -> str:
    """Hex SHA-256 of `data` (text is hashed as UTF-8, exactly as it is stored on disk)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def insert_revision(conn: sqlite3.Connection, persona_id: str, filename: str, author: str,
                    content: str, *, job_id: str | None = None,
                    message_range: tuple[int | None, int | None] | None = None, summary: str = "",
                    committed: bool = True, review: dict | None = None,
                    reverts: int | None = None) -> int:
    """Adds a revision and returns its id (uncommitted rows stay invisible until committed)."""
    if author not in AUTHORS:
        raise ValueError(f"Unknown revision author {author!r}; use one of {', '.join(AUTHORS)}.")
    message_from, message_to = message_range or (None, None)
    cursor = conn.execute(
        "INSERT INTO cortex_revisions (persona_id, filename, author, content, sha256, chars, "
        "created_at, job_id, message_from, message_to, summary, committed, proposal_id, review, "
        "reverts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (persona_id, filename, author, content, sha256_of(content), len(content), utc_now(),
         job_id, message_from, message_to, summary or "", 1 if committed else 0,
         (review or {}).get("proposal_id"), (review or {}).get("review"), reverts))
    assert cursor.lastrowid is not None  # set by the INSERT
    return cursor.lastrowid


def commit_revision(conn: sqlite3.Connection, rev: int) -> None:
    """Makes a pending revision visible."""
    conn.execute("UPDATE cortex_revisions SET committed = 1 WHERE id = ?", (rev,))


def drop_revision(conn: sqlite3.Connection, rev: int) -> None:
    """Deletes a pending revision whose content never reached the disk."""
    conn.execute("DELETE FROM cortex_revisions WHERE id = ? AND committed = 0", (rev,))


def pending_revisions(conn: sqlite3.Connection, persona_id: str,
                      filename: str) -> list[sqlite3.Row]:
    """Uncommitted rows of one file, newest first (only a killed writer leaves any)."""
    return conn.execute(
        "SELECT id, sha256 FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 0 ORDER BY id DESC", (persona_id, filename)).fetchall()


def latest_revision(conn: sqlite3.Connection, persona_id: str,
                    filename: str) -> sqlite3.Row | None:
    """The newest committed revision of one file (with content), or None."""
    return conn.execute(
        f"SELECT {_COLUMNS}, content FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 1 ORDER BY id DESC LIMIT 1", (persona_id, filename)).fetchone()


def latest_content(conn: sqlite3.Connection, persona_id: str, filename: str) -> str | None:
    """The text of the file's newest committed revision, or None (any row factory)."""
    row = conn.execute(
        "SELECT content FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 1 ORDER BY id DESC LIMIT 1", (persona_id, filename)).fetchone()
    return row[0] if row is not None else None


def version_of(conn: sqlite3.Connection, persona_id: str, filename: str, rev: int) -> int:
    """The file's own number of revision `rev`: 1 for its first committed revision, counting as
    the history lists them (the history and the merge view show "#3", not the id)."""
    return conn.execute(
        "SELECT COUNT(*) FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 1 AND id <= ?", (persona_id, filename, rev)).fetchone()[0]


def newest_id(conn: sqlite3.Connection, persona_id: str, filename: str) -> int | None:
    """The id of the file's newest row, committed or pending (a new row of any kind changes it)."""
    return conn.execute(
        "SELECT MAX(id) FROM cortex_revisions WHERE persona_id = ? AND filename = ?",
        (persona_id, filename)).fetchone()[0]


def find_revision(conn: sqlite3.Connection, persona_id: str, filename: str,
                  rev: int) -> sqlite3.Row | None:
    """One committed revision of this persona's file (with content), or None."""
    return conn.execute(
        f"SELECT {_COLUMNS}, content FROM cortex_revisions WHERE id = ? AND persona_id = ? "
        "AND filename = ? AND committed = 1", (rev, persona_id, filename)).fetchone()


def previous_revision(conn: sqlite3.Connection, persona_id: str, filename: str,
                      rev: int) -> sqlite3.Row | None:
    """The committed revision just before `rev` of the same file, or None."""
    return conn.execute(
        f"SELECT {_COLUMNS}, content FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 1 AND id < ? ORDER BY id DESC LIMIT 1",
        (persona_id, filename, rev)).fetchone()


def list_revisions(conn: sqlite3.Connection, persona_id: str, filename: str) -> list[Revision]:
    """Every committed revision of one file, newest first, without content."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM cortex_revisions WHERE persona_id = ? AND filename = ? "
        "AND committed = 1 ORDER BY id DESC", (persona_id, filename)).fetchall()
    sources = provenance.sources_by_revision(conn, [row["id"] for row in rows])
    return [revision_of(row, sources.get(row["id"])) for row in rows]


def delete_persona_revisions(conn: sqlite3.Connection, persona_id: str) -> int:
    """Deletes all revisions of a persona; returns how many there were."""
    return conn.execute("DELETE FROM cortex_revisions WHERE persona_id = ?",
                        (persona_id,)).rowcount


def revision_of(row: sqlite3.Row, source: RevisionSource | None = None) -> Revision:
    """The resource of a stored revision (validated once): {rev, author, created_at, summary,
    sha256} plus details: `source` (the messages it came from, or whose retraction it handled)
    and `reverts`."""
    return Revision.model_validate(_fields(row, source))


def detail_of(row: sqlite3.Row, source: RevisionSource | None, previous_rev: int | None,
              diff: str) -> RevisionDetail:
    """The revision with its content, the revision before it and the diff to that one."""
    return RevisionDetail.model_validate({
        **_fields(row, source), "filename": row["filename"], "content": row["content"],
        "previous_rev": previous_rev, "diff": diff})


def _fields(row: sqlite3.Row, source: RevisionSource | None) -> dict:
    return {
        "rev": row["id"], "author": row["author"], "created_at": row["created_at"],
        "summary": row["summary"], "sha256": row["sha256"], "chars": row["chars"],
        "job_id": row["job_id"], "message_from": row["message_from"],
        "message_to": row["message_to"],
        "reviewed": ({"reviewer": "user", "decision": row["review"],
                      "proposal_id": row["proposal_id"]} if row["review"] else None),
        "source": source, "reverts": row["reverts"],
    }


def pending_row(conn: sqlite3.Connection, rev: int) -> sqlite3.Row | None:
    """The uncommitted revision `rev` (filename, content, sha256), or None once settled."""
    return conn.execute("SELECT filename, content, sha256 FROM cortex_revisions "
                        "WHERE id = ? AND committed = 0", (rev,)).fetchone()


def committed_texts(conn: sqlite3.Connection, persona_id: str,
                    filename: str) -> list[sqlite3.Row]:
    """Every committed revision of one file newest first: id, author, reverts, content."""
    return conn.execute(
        "SELECT id, author, reverts, content FROM cortex_revisions WHERE persona_id = ? AND "
        "filename = ? AND committed = 1 ORDER BY id DESC", (persona_id, filename)).fetchall()


def latest_sizes(conn: sqlite3.Connection, persona_id: str) -> list[sqlite3.Row]:
    """Size and time (`chars`, `created_at`) of the newest committed revision of each file."""
    return conn.execute(
        "SELECT r.chars, r.created_at FROM cortex_revisions r WHERE r.persona_id = ? AND "
        "r.committed = 1 AND r.id = (SELECT MAX(id) FROM cortex_revisions x WHERE "
        "x.persona_id = r.persona_id AND x.filename = r.filename AND x.committed = 1)",
        (persona_id,)).fetchall()


def newest_ids(conn: sqlite3.Connection, persona_id: str,
               filenames: tuple[str, ...]) -> tuple[int | None, ...]:
    """The newest revision row id (committed or pending) of each of `filenames`, in order
    (what the prompt's cached cortex texts depend on, `cortex/prompt_cache.py`). Asked on
    every chat turn, so each is two seeks at the end of the index (`committed` sits between
    the file and the id in it), not a scan of every revision the persona ever had."""
    newest = ("MAX(COALESCE((SELECT MAX(id) FROM cortex_revisions WHERE persona_id = ?1 AND "
              "filename = ?{n} AND committed = 0), 0), COALESCE((SELECT MAX(id) FROM "
              "cortex_revisions WHERE persona_id = ?1 AND filename = ?{n} AND committed = 1), 0))")
    sql = "SELECT " + ", ".join(newest.format(n=i + 2) for i in range(len(filenames)))
    row = conn.execute(sql, (persona_id, *filenames)).fetchone()
    return tuple(found or None for found in row)
