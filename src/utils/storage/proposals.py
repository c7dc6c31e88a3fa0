"""Proposals in SQLite (tables `cortex_proposals`, `cortex_proposal_files`, migration 0018).

A review-mode run stores its staged edits here instead of applying them. At most one proposal
per persona is pending: a later run builds on its text and `save_proposal` folds the new edits
into it, so proposals do not pile up as near-duplicates. Each file keeps the revision and text it
builds on, the proposed text and the edits leading there, so a stale file can be replayed on the
current text with the same rules as any staged edit.
"""
import json
import sqlite3
import uuid
from collections.abc import Iterable

from ..models.review import ProposalSummary, StoredProposal
from .clock import utc_now

_FILE_COLUMNS = ("filename, status, base_revision, base_content, content, edits, revision, "
                 "review, decided_at")


def pending_proposal(conn: sqlite3.Connection, persona_id: str) -> StoredProposal | None:
    """The persona's pending proposal with its files, or None."""
    row = conn.execute("SELECT id FROM cortex_proposals WHERE persona_id = ? AND "
                       "status = 'pending' ORDER BY created_at LIMIT 1", (persona_id,)).fetchone()
    return get_proposal(conn, persona_id, row["id"]) if row else None


def get_proposal(conn: sqlite3.Connection, persona_id: str,
                 proposal_id: str) -> StoredProposal | None:
    """One proposal of this persona with its files (in the cortex's file order), or None."""
    row = conn.execute("SELECT * FROM cortex_proposals WHERE id = ? AND persona_id = ?",
                       (proposal_id, persona_id)).fetchone()
    if row is None:
        return None
    proposal = _decode(row)
    files = conn.execute(f"SELECT {_FILE_COLUMNS} FROM cortex_proposal_files WHERE "
                         "proposal_id = ?", (proposal_id,)).fetchall()
    order = {"memory.md": 0, "soul.md": 1, "relationship.md": 2}
    proposal["files"] = sorted(({**dict(f), "edits": json.loads(f["edits"])} for f in files),
                               key=lambda f: order.get(f["filename"], 9))
    return StoredProposal.model_validate(proposal)


def pending_range(conn: sqlite3.Connection, persona_id: str) -> sqlite3.Row | None:
    """`message_from`, `message_to` and `sources` (the anchors, JSON; what names a learn run's
    messages, its range being null) of the persona's pending proposal, or None."""
    return conn.execute("SELECT message_from, message_to, sources FROM cortex_proposals WHERE "
                        "persona_id = ? AND status = 'pending'", (persona_id,)).fetchone()


def list_proposals(conn: sqlite3.Connection, persona_id: str, status: str | None = None,
                   limit: int = 50) -> list[ProposalSummary]:
    """The persona's proposals, newest first (without file texts)."""
    sql, params = "SELECT * FROM cortex_proposals WHERE persona_id = ?", [persona_id]
    if status:
        sql += " AND status = ?"
        params.append(status)
    rows = conn.execute(sql + " ORDER BY created_at DESC, rowid DESC LIMIT ?",
                        (*params, limit)).fetchall()
    result = []
    for row in rows:
        proposal = _decode(row)
        proposal["files"] = [dict(f) for f in conn.execute(
            "SELECT filename, status, base_revision, revision FROM cortex_proposal_files "
            "WHERE proposal_id = ? ORDER BY filename", (row["id"],))]
        result.append(ProposalSummary.model_validate(proposal))
    return result


def count_pending(conn: sqlite3.Connection, persona_id: str) -> int:
    """How many proposals of the persona wait for a decision (0 or 1)."""
    return conn.execute("SELECT COUNT(*) FROM cortex_proposals WHERE persona_id = ? AND "
                        "status = 'pending'", (persona_id,)).fetchone()[0]


def save_proposal(conn: sqlite3.Connection, pid: str, changed: list[dict], *, job_id: str,
                  kind: str, summary: str,
                  message_range: tuple[int | None, int | None] | None = None,
                  sources: Iterable[dict] = ()) -> str | None:
    """Folds a run's changed files (`{filename, base_revision, base_content, content, edits}`)
    into the pending proposal (or a new one) inside the caller's transaction; returns its id,
    or None when the run changed nothing."""
    if not changed:
        return None
    now = utc_now()
    current = pending_proposal(conn, pid)
    if current is None:
        proposal_id = uuid.uuid4().hex
        conn.execute("INSERT INTO cortex_proposals (id, persona_id, status, created_at, "
                     "updated_at) VALUES (?, ?, 'pending', ?, ?)", (proposal_id, pid, now, now))
        job_ids, kinds, earlier, anchors = [], [], "", []
    else:
        proposal_id, job_ids, kinds = current.id, current.job_ids, current.kinds
        earlier, anchors = current.summary, current.sources
    known = {s["message_id"] for s in anchors}
    merged = anchors + [s for s in sources if s["message_id"] not in known]
    first, last = message_range or (None, None)
    conn.execute(
        "UPDATE cortex_proposals SET job_ids = ?, kinds = ?, summary = ?, message_from = "
        "COALESCE(message_from, ?), message_to = COALESCE(?, message_to), updated_at = ?, "
        "sources = ? WHERE id = ?",
        (json.dumps(job_ids + [job_id]), json.dumps(sorted(set(kinds) | {kind})),
         "\n".join(part for part in (earlier, summary) if part), first, last, now,
         json.dumps(merged), proposal_id))
    for staged_file in changed:
        conn.execute(
            "INSERT OR REPLACE INTO cortex_proposal_files (proposal_id, filename, status, "
            "base_revision, base_content, content, edits) VALUES (?, ?, 'pending', ?, ?, ?, ?)",
            (proposal_id, staged_file["filename"], staged_file["base_revision"],
             staged_file["base_content"], staged_file["content"],
             json.dumps(staged_file["edits"])))
    return proposal_id


def files_pending(conn: sqlite3.Connection, proposal_id: str, filenames: Iterable[str]) -> bool:
    """True while every one of `filenames` still waits for a decision in the proposal."""
    rows = conn.execute("SELECT filename FROM cortex_proposal_files WHERE proposal_id = ? AND "
                        "status = 'pending'", (proposal_id,)).fetchall()
    return set(filenames) <= {row["filename"] for row in rows}


def mark_accepted(conn: sqlite3.Connection, review: dict, revisions: dict) -> None:
    """Marks the reviewed files accepted with the revision each got (step 3 of applying)."""
    for filename in review["files"]:
        decide(conn, review["proposal_id"], filename, "accepted",
               revision=revisions.get(filename, review.get("unchanged", {}).get(filename)),
               review=review["review"])


def decide(conn: sqlite3.Connection, proposal_id: str, filename: str, status: str, *,
           revision: int | None = None, review: str | None = None) -> None:
    """Records one file's decision and settles the proposal's status once none is pending."""
    conn.execute("UPDATE cortex_proposal_files SET status = ?, revision = ?, review = ?, "
                 "decided_at = ? WHERE proposal_id = ? AND filename = ? AND status = 'pending'",
                 (status, revision, review, utc_now(), proposal_id, filename))
    states = {row[0] for row in conn.execute(
        "SELECT status FROM cortex_proposal_files WHERE proposal_id = ?", (proposal_id,))}
    if "pending" not in states:
        conn.execute("UPDATE cortex_proposals SET status = ?, decided_at = ? WHERE id = ? AND "
                     "status = 'pending'",
                     ("accepted" if "accepted" in states else "rejected", utc_now(), proposal_id))


def _decode(row: sqlite3.Row) -> dict:
    proposal = dict(row)
    proposal["job_ids"] = json.loads(proposal["job_ids"])
    proposal["kinds"] = json.loads(proposal["kinds"])
    proposal["sources"] = json.loads(proposal.get("sources") or "[]")
    return proposal
