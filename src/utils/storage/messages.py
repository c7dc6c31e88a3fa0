"""Message rows. Ids grow globally (AUTOINCREMENT), so a child's id is always above its parent's
and the cortex trigger can count "the persona's messages after id N". The tree itself (parents,
siblings, the active branch) lives in `tree.py`.

Reads answer `Message` (the API's shape, validated once per row here) except the prompt's
history, which is `HistoryMessage` tuples: a chat turn reads dozens of rows on every turn
(docs/development.md, "Typed resources"). The write side's `add_message` and `finish_reply`
still answer their `RETURNING` row as a dict (the chat turn reads its id and text).
"""
import json
import sqlite3
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ..models.history import HistoryMessage
from ..models.sessions import FiredEntry, Message, ReplyError
from . import search, tree
from .clock import utc_now
from .db import transaction
from .sessions import touch_session

COLUMNS = ("id, session_id, persona_id, role, content, status, created_at, parent_id, edited, "
           "streaming, stop_reason, error, cortex_revisions, world_info")
_COLUMNS = COLUMNS
Siblings = dict[int | None, list[int]]  # children ids per parent id: `tree.siblings`


class _Leaf(Enum):
    """The default of `add_message`'s `parent_id` (None already means "a root")."""

    ACTIVE = "the session's active leaf"


def add_message(conn: sqlite3.Connection, session_id: str, role: str, content: str,
                status: str = "complete", *,
                parent_id: int | Literal[_Leaf.ACTIVE] | None = _Leaf.ACTIVE,
                streaming: bool = False, edited: bool = False, cause: str = "edit") -> dict:
    """Stores a message under `parent_id` (default: the session's active leaf) and makes it the
    session's active leaf. Raises LookupError for an unknown session or a parent outside it,
    and sqlite3.IntegrityError for a bad role/status."""
    now = utc_now()
    with transaction(conn):
        leaf = tree.active_leaf(conn, session_id)
        if parent_id is _Leaf.ACTIVE:
            parent_id = leaf
        elif parent_id is not None and parent_id != leaf and \
                not tree.in_session(conn, session_id, parent_id):
            raise LookupError(f"message {parent_id} is not in session {session_id}")
        extends = leaf is not None and parent_id == leaf  # the common append: nothing moves
        row = _insert(conn, _UNDER, session_id, (role, content, status, now, parent_id, edited,
                                                 streaming, extends))
        if extends:
            conn.execute("UPDATE sessions SET active_leaf_id = ?, updated_at = ? WHERE id = ?",
                         (row["id"], now, session_id))
        else:
            tree.set_active(conn, session_id, row["id"], cause, fresh=row["id"])
            touch_session(conn, session_id, now)
    return row


def add_exchange(conn: sqlite3.Connection, session_id: str, text: str) -> tuple[dict, dict]:
    """A chat turn's start: the person's `text` under the session's active leaf and an empty
    streaming reply under it, which becomes the active leaf; answers both rows. The same rows
    and branch as two `add_message`s in three statements instead of six (issue #23): the
    leaf is read by the first insert itself (its `parent_id` answers it), and the session is
    updated once, with the reply."""
    now = utc_now()
    with transaction(conn):
        user = _insert(conn, _UNDER_LEAF, session_id, ("user", text, "complete", now, False,
                                                       False))
        if user["parent_id"] is None:  # the first message is a root: its branch the long way
            tree.set_active(conn, session_id, user["id"], "edit", fresh=user["id"])
        reply = _insert(conn, _UNDER, session_id, ("assistant", "", "incomplete", now,
                                                   user["id"], False, True, True))
        conn.execute("UPDATE sessions SET active_leaf_id = ?, updated_at = ? WHERE id = ?",
                     (reply["id"], now, session_id))
    return user, reply


def _insert(conn: sqlite3.Connection, sql: str, session_id: str, values: tuple) -> dict:
    """Inserts a message row into the session with `sql` (`_UNDER`, `_UNDER_LEAF`) and
    answers it; LookupError for an unknown session."""
    row = conn.execute(sql, (*values, session_id)).fetchone()
    if row is None:
        raise LookupError(f"unknown session: {session_id}")
    return dict(row)


_INSERT = ("INSERT INTO messages (session_id, persona_id, role, content, status, created_at, "
           "parent_id, edited, streaming, on_branch) SELECT id, persona_id, ?, ?, ?, ?, {parent}, "
           "?, ?, {on_branch} FROM sessions WHERE id = ? RETURNING " + _COLUMNS)
# values: role, content, status, created_at, parent_id, edited, streaming, on_branch
_UNDER = _INSERT.format(parent="?", on_branch="?")
# under the session's active leaf, read in the insert (on the branch unless it is a root);
# values: role, content, status, created_at, edited, streaming
_UNDER_LEAF = _INSERT.format(parent="active_leaf_id", on_branch="active_leaf_id IS NOT NULL")


def get_message(conn: sqlite3.Connection, message_id: int, siblings: Siblings | None = None
                ) -> Message | None:
    """The message with `message_id`, or None; with `siblings` (`tree.siblings` of its
    session) it carries the ids of its alternatives."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
    return _message(row, siblings) if row else None


def list_messages(conn: sqlite3.Connection, session_id: str, *, before_id: int | None = None,
                  limit: int = 50, siblings: Siblings | None = None) -> list[Message]:
    """One page of the active branch: its newest `limit` messages older than `before_id`,
    oldest first (on one branch, ids grow from the root to the leaf); with `siblings` as in
    `get_message`."""
    sql = f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND on_branch = 1"
    params: list = [session_id]
    if before_id is not None:
        sql += " AND id < ?"
        params.append(before_id)
    rows = conn.execute(sql + " ORDER BY id DESC LIMIT ?", (*params, limit)).fetchall()
    return [_message(row, siblings) for row in reversed(rows)]


def off_branch_messages(conn: sqlite3.Connection, session_id: str) -> list[Message]:
    """The session's messages off the active branch (alternatives), oldest first."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND on_branch = 0 "
                        "ORDER BY id", (session_id,)).fetchall()
    return [_message(row) for row in rows]


def last_messages(conn: sqlite3.Connection, session_id: str, n: int) -> list[Message]:
    """The active branch's last `n` messages, oldest first."""
    return list_messages(conn, session_id, limit=n)


def is_on_branch(conn: sqlite3.Connection, message_id: int) -> bool:
    """True when the message is on its session's active branch."""
    return bool(conn.execute("SELECT on_branch FROM messages WHERE id = ?",
                             (message_id,)).fetchone()[0])


def update_message(conn: sqlite3.Connection, message_id: int, *, content: str | None = None,
                   status: str | None = None) -> Message | None:
    """Changes a message's content and/or status; returns it, or None when it does not exist."""
    changes = {name: value for name, value in (("content", content), ("status", status))
               if value is not None}
    with transaction(conn):
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            conn.execute(f"UPDATE messages SET {assignments} WHERE id = ?",
                         (*changes.values(), message_id))
        message = get_message(conn, message_id)
        if message and changes:
            touch_session(conn, message.session_id)
    return message


def delete_message(conn: sqlite3.Connection, message_id: int, cause: str = "delete") -> bool:
    """Deletes a message and everything below it (recorded as retracted); the session's active
    leaf moves to the latest leaf under the parent. True when it existed."""
    with transaction(conn):
        row = conn.execute("SELECT session_id, parent_id, on_branch FROM messages WHERE id = ?",
                           (message_id,)).fetchone()
        if row is None:
            return False
        tree.record_subtree(conn, message_id, cause)
        conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))
        if row["on_branch"]:
            leaf = tree.latest_leaf(conn, row["parent_id"], row["session_id"])
            tree.set_active(conn, row["session_id"], leaf, cause)
        touch_session(conn, row["session_id"])
    return True


def count_messages(conn: sqlite3.Connection, session_id: str | None = None, *,
                   persona_id: str | None = None, after_id: int | None = None,
                   before_id: int | None = None) -> int:
    """Counts messages on active branches matching every filter given (session, persona, ids)."""
    filters = (("session_id = ?", session_id), ("persona_id = ?", persona_id),
               ("id > ?", after_id), ("id < ?", before_id))
    used = [(clause, value) for clause, value in filters if value is not None]
    where = " AND ".join(["on_branch = 1", *(clause for clause, _ in used)])
    row = conn.execute(f"SELECT COUNT(*) FROM messages WHERE {where}",
                       [value for _, value in used]).fetchone()
    return row[0]


def history_for_prompt(conn: sqlite3.Connection, session_id: str, limit: int,
                       upto_id: int | None = None) -> list[HistoryMessage]:
    """The last `limit` messages of the branch ending at `upto_id` (default: the active leaf)
    as Messages-API turns (`HistoryMessage.turn()`).

    Empty messages (a reply stopped or failed before its first token) are skipped, the history
    starts with a user turn, and consecutive turns of one role are joined, so the list is
    always valid input.
    """
    upto_id = tree.active_leaf(conn, session_id) if upto_id is None else upto_id
    path = tree.path_messages(conn, upto_id, limit) if upto_id else []
    turns: list[HistoryMessage] = []
    for message in path:
        if not message.content.strip():
            continue
        if not turns and message.role != "user":
            continue
        if turns and turns[-1].role == message.role:
            turns[-1] = turns[-1]._replace(content=f"{turns[-1].content}\n\n{message.content}")
        else:
            turns.append(message)
    return turns


def finish_reply(conn: sqlite3.Connection, message_id: int, content: str, status: str,
                 stop_reason: str | None, error: dict | None,
                 sources: tuple[dict | None, list[dict]] | None = None) -> dict | None:
    """Ends a streaming reply: its final text, status, stop reason and error, if any; with
    `sources`, what its prompt held, in the same update: the cortex revision per file (its
    provenance; None: cortex off) and the world info entries that fired."""
    recorded = "" if sources is None else ", cortex_revisions = ?, world_info = ?"
    with transaction(conn):
        row = conn.execute(f"UPDATE messages SET content = ?, status = ?, stop_reason = ?, "
                           f"error = ?, streaming = 0{recorded} WHERE id = ? "
                           f"RETURNING {_COLUMNS}",
                           (content, status, stop_reason, json.dumps(error) if error else None,
                            *(() if sources is None else _sources(*sources)),
                            message_id)).fetchone()
        message = dict(row) if row else None
        if message:
            touch_session(conn, message["session_id"])
            search.keep_up(conn)
    return message


def _sources(revisions: dict | None, fired: list[dict]) -> tuple[str | None, str | None]:
    """The stored texts of a reply's prompt sources (NULL: cortex off, nothing fired)."""
    return (json.dumps(revisions) if revisions is not None else None,
            json.dumps(fired, ensure_ascii=False) if fired else None)


def request_stop(conn: sqlite3.Connection, message_id: int) -> bool:
    """Marks a streaming reply for stopping (its generator checks the mark); True if streaming."""
    with transaction(conn):
        return conn.execute("UPDATE messages SET stop_reason = 'stop_requested' "
                            "WHERE id = ? AND streaming = 1", (message_id,)).rowcount == 1


def streaming_reply(conn: sqlite3.Connection, session_id: str) -> Message | None:
    """The session's reply that is being generated, if any."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND streaming = 1 "
                       "ORDER BY id DESC LIMIT 1", (session_id,)).fetchone()
    return _message(row) if row else None


def streaming_replies(conn: sqlite3.Connection) -> list[Message]:
    """Every reply marked as being generated (recovery looks for orphans among them)."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM messages WHERE streaming = 1").fetchall()
    return [_message(row) for row in rows]


def save_partial_replies(conn: sqlite3.Connection, texts: list[tuple[str, int]]) -> None:
    """Stores the text so far of replies still streaming (`(content, id)` pairs)."""
    conn.executemany("UPDATE messages SET content = ? WHERE id = ? AND streaming = 1", texts)


def mark_followed(conn: sqlite3.Connection, message_ids: list[int]) -> bool:
    """Marks streaming replies as followed from elsewhere (their generating process then keeps
    their rows' text current); a stop mark stays, it says more. Writes only when one of them
    has no mark yet (a page read while a reply streams would otherwise take the write lock);
    True if it marked one (the caller rings the generating processes: `process_bells.py`)."""
    marks = ",".join("?" * len(message_ids))
    unmarked = f"id IN ({marks}) AND streaming = 1 AND stop_reason IS NULL"
    if conn.execute(f"SELECT 1 FROM messages WHERE {unmarked} LIMIT 1",
                    message_ids).fetchone() is None:
        return False
    with transaction(conn):
        return conn.execute(f"UPDATE messages SET stop_reason = 'followed' WHERE {unmarked}",
                            message_ids).rowcount > 0


def reply_marks(conn: sqlite3.Connection, message_ids: list[int]) -> dict[int, str | None]:
    """Per existing message of `message_ids` that still streams: the mark another process left
    on it (`stop_requested`, `followed`) or None; "ended" for one that no longer streams."""
    marks = ",".join("?" * len(message_ids))
    return {row["id"]: row["stop_reason"] if row["streaming"] else "ended"
            for row in conn.execute(f"SELECT id, streaming, stop_reason FROM messages "
                                    f"WHERE id IN ({marks})", message_ids)}


def resume_reply(conn: sqlite3.Connection, message_id: int, content: str) -> None:
    """Makes a stored reply stream again (to continue it) from `content`."""
    with transaction(conn):
        conn.execute("UPDATE messages SET content = ?, status = 'incomplete', streaming = 1, "
                     "stop_reason = NULL, error = NULL WHERE id = ?", (content, message_id))


def _message(row: sqlite3.Row, siblings: Siblings | None = None) -> Message:
    """A row as the API shows it: `status` "streaming" (and no `stop_reason`: the marks other
    processes leave are no end yet) while generated, `error` as an object, `edited` as a
    boolean; a reply's prompt sources (`cortex_revisions`, `world_info`) decoded; the ids of
    its alternatives when `siblings` is given (in the one validation: a copy would cost more)."""
    streaming = row["streaming"]
    shown: dict[str, Any] = {
        "id": row["id"], "session_id": row["session_id"], "persona_id": row["persona_id"],
        "role": row["role"], "content": row["content"], "created_at": row["created_at"],
        "parent_id": row["parent_id"], "stop_reason": None if streaming else row["stop_reason"],
        "status": "streaming" if streaming else row["status"], "edited": bool(row["edited"]),
        "error": _error(row["error"])}
    if row["role"] == "assistant":
        shown["cortex_revisions"] = _decoded(row["cortex_revisions"], dict)
        shown["world_info"] = _decoded(row["world_info"], list)
    if siblings is not None:
        shown["siblings"] = siblings.get(row["parent_id"], [row["id"]])
    try:
        return Message.model_validate(shown)
    except ValidationError:  # JSON of the wrong shape (another tool, an older version)
        return _readable(shown)


def _readable(shown: dict[str, Any]) -> Message:
    """The message with its decoded JSON columns as the API can show them: an error of the
    wrong shape reads as a retryable failure (like text that is not JSON), revisions of the
    wrong shape as none recorded, and of the fired entries those that have the shape of one."""
    readable = dict(shown)
    if shown["error"] is not None and not _valid(ReplyError.model_validate, shown["error"]):
        readable["error"] = _UNREADABLE_ERROR
    if shown.get("cortex_revisions") is not None and not _valid(_REVISIONS.validate_python,
                                                                 shown["cortex_revisions"]):
        readable["cortex_revisions"] = None
    if shown.get("world_info") is not None:
        readable["world_info"] = [entry for entry in shown["world_info"]
                                  if _valid(FiredEntry.model_validate, entry)] or None
    return Message.model_validate(readable)


def _valid(check: Callable[[Any], Any], value: Any) -> bool:
    try:
        check(value)
    except ValidationError:
        return False
    return True


def _error(raw: str | None) -> dict | None:
    """A stored reply's failure `{code, message, retryable}`, or None; text that is not JSON
    reads as a retryable failure."""
    if not raw:
        return None
    try:
        error = json.loads(raw)
    except ValueError:
        return dict(_UNREADABLE_ERROR)
    return error if isinstance(error, dict) else None


_UNREADABLE_ERROR = {"code": "api_error", "message": "The reply failed.", "retryable": True}
_REVISIONS = TypeAdapter(dict[str, int])


def _decoded(raw: str | None, kind: type) -> Any:
    """A JSON column holding a `kind` (a reply's revisions per file, its fired entries), or
    None (none recorded, or not readable)."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, kind) else None
