"""Unified diffs of cortex texts (a history revision against its predecessor, a proposal against
its base), computed off the event loop.

difflib's matcher is superlinear: on texts up to the hard cap made of lines that each repeat a
few dozen times (too rare for its autojunk heuristic) one diff computes for seconds, and under
gevent that would freeze every connection of the worker. Diffs of more than INLINE_LINES lines
run through `cooperative.offload` (the worker's heavy-work process; a 503 `Busy` when too many
heavy steps wait); small ones are computed in place, where they cost milliseconds.
"""
import difflib
import sqlite3

from ..cooperative import offload
from ..models.cortex import RevisionDetail, RevisionSource
from ..storage.cortex_revisions import detail_of

INLINE_LINES = 400  # before + after; the matcher's worst case here is a few milliseconds


def unified(before: str, after: str, fromfile: str, tofile: str) -> str:
    """The unified diff of `before` to `after` in the history's style ("" when equal)."""
    if before.count("\n") + after.count("\n") <= INLINE_LINES:
        return unified_text(before, after, fromfile, tofile)
    return offload(unified_text, before, after, fromfile, tofile)


def unified_text(before: str, after: str, fromfile: str, tofile: str) -> str:
    """`unified` computed here (the heavy-work process runs this)."""
    text = "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          fromfile=fromfile, tofile=tofile, lineterm=""))
    return text + "\n" if text else ""


def revision_detail(row: sqlite3.Row, previous: sqlite3.Row | None,
                    source: RevisionSource | None = None) -> RevisionDetail:
    """A revision with its content and a unified diff to its predecessor (or to nothing)."""
    before = previous["content"] if previous is not None else ""
    from_name = f"{row['filename']}@{previous['id']}" if previous is not None else "/dev/null"
    text = unified(before, row["content"], from_name, f"{row['filename']}@{row['id']}")
    return detail_of(row, source, previous["id"] if previous is not None else None, text)
