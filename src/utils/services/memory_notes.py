"""Memory notes in a conversation's timeline (issue 11): "Mira remembered: …" after the message
an update read up to, with the lines it added and the revisions to open as a diff. Derived from
the revisions on every read, so a note stays where it belongs after a reload, follows the active
branch (a note whose messages all left the branch is not shown) and needs no table of its own.
A note names only the lines the memory still holds: a line restored (or edited) away since is
left out, and a note left with nothing it remembered is not shown.

Every read computes this for up to MAX_NOTES * 3 revisions of up to the hard cap each, on the
worker's event loop: the added lines are a multiset difference (linear), not a sequence diff,
which took seconds of CPU per revision on repetitive text (docs/chat.md)."""
import bisect
import sqlite3
from collections import Counter

from ..storage import memory_notes as store

MAX_NOTES = 100
MAX_LINES = 6
MAX_LINE = 300


def notes(conn: sqlite3.Connection, session_id: str, persona_id: str) -> list[dict]:
    """The session's notes, oldest first: `{after_message_id, job_id, created_at, files}`, each
    file `{filename, rev, added, more}` (`added`: up to 6 added lines, `more`: how many else)."""
    ids = store.branch_ids(conn, session_id)
    if not ids:
        return []
    current = store.current_contents(conn, persona_id)
    grouped: dict[tuple, dict] = {}
    for row in store.ai_revisions(conn, persona_id, ids[0], ids[-1], MAX_NOTES * 3):
        anchor = _anchor(ids, row["message_from"], row["message_to"])
        added = _added(row["previous"] or "", row["content"], current.get(row["filename"], ""))
        if anchor is None or added is None:
            continue
        key = (row["job_id"] or f"rev{row['id']}", anchor)
        note = grouped.setdefault(key, {"after_message_id": anchor, "job_id": row["job_id"],
                                        "created_at": row["created_at"], "files": []})
        note["files"].insert(0, {"filename": row["filename"], "rev": row["id"], **added})
    found = sorted(grouped.values(), key=lambda n: (n["after_message_id"], n["created_at"]))
    return found[-MAX_NOTES:]


def _anchor(ids: list[int], low: int, high: int) -> int | None:
    """The last message of the branch inside `low..high`, or None when none is on it."""
    index = bisect.bisect_right(ids, high) - 1
    return ids[index] if index >= 0 and ids[index] >= low else None


def _added(before: str, after: str, now: str) -> dict | None:
    """The non-blank lines `after` has beyond those `before` had (stripped, counted as a
    multiset, in `after`'s order), of those the file still holds `now`; None when the revision
    added lines and none of them is left (a revision that added none, only changed or removed,
    still counts as an update). A line only moved is not an added one."""
    lines = _beyond(after, before)
    kept = {line.strip() for line in now.splitlines()}
    left = [line for line in lines if line in kept]
    if lines and not left:
        return None
    return {"added": [line[:MAX_LINE] for line in left[:MAX_LINES]],
            "more": max(0, len(left) - MAX_LINES)}


def _beyond(after: str, before: str) -> list[str]:
    """The stripped non-blank lines of `after` in excess of their count in `before`, in order
    (the later copies of a line that `after` holds more often than `before` did)."""
    had = Counter(line for line in _lines(before))
    extra = []
    for line in _lines(after):
        if had[line] > 0:
            had[line] -= 1
        else:
            extra.append(line)
    return extra


def _lines(text: str) -> list[str]:
    return [stripped for line in text.splitlines() if (stripped := line.strip())]
