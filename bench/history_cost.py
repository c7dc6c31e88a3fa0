"""What a chat turn pays to read its prompt's history, per typed form (issue 22):

    .venv/bin/python bench/history_cost.py [--messages 80] [--number 10] [--rounds 500]

One session of `--messages` alternating messages (about 350 characters each) on disk; each case
reads the last 40 (the default `context_limit`) and the last 80 rows of the active branch and
hands them to what the prompt builder does with them (the world info scan's `Name: text` lines,
the request's `messages` with post-history instructions and a continued reply's prefix). Cases:
`dict` is the code before the change (`sqlite3.Row` → dict per row, a new dict per turn);
`pydantic` validates a model per row (what the REST reads do); `namedtuple` is the code as it
is (`HistoryMessage._make` over plain tuples). Best of `--rounds` interleaved runs of this
process's CPU time (a shared machine's load does not count), in µs per call.
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from src.utils.services import prompt_builder as prompts  # noqa: E402
from src.utils.storage import Database, messages, personas, sessions, tree  # noqa: E402

SID = "b" * 16
_ON_BRANCH = ("SELECT m.id, m.role, m.content FROM messages m WHERE m.session_id = "
              "(SELECT session_id FROM messages WHERE id = ?) AND m.on_branch = 1 AND m.id <= ? "
              "ORDER BY m.id DESC LIMIT ?")


class _Row(BaseModel):
    id: int
    role: Literal["user", "assistant"]
    content: str


def _joined(path: list, get: Callable, make: Callable) -> list:
    """history_for_prompt's rules over any row type (skip empty, start with the person, join)."""
    turns: list = []
    for row in path:
        role, content = get(row, "role"), get(row, "content")
        if not content.strip() or (not turns and role != "user"):
            continue
        if turns and get(turns[-1], "role") == role:
            turns[-1] = make(role, f"{get(turns[-1], 'content')}\n\n{content}")
        else:
            turns.append(make(role, content))
    return turns


def _dict_history(conn: sqlite3.Connection, leaf: int, limit: int) -> list[dict]:
    rows = conn.execute(_ON_BRANCH, (leaf, leaf, limit)).fetchall()
    path = [dict(row) for row in reversed(rows)]
    return _joined(path, lambda r, k: r[k], lambda role, text: {"role": role, "content": text})


def _pydantic_history(conn: sqlite3.Connection, leaf: int, limit: int) -> list[_Row]:
    rows = conn.execute(_ON_BRANCH, (leaf, leaf, limit)).fetchall()
    path = [_Row.model_validate(dict(row)) for row in reversed(rows)]
    return _joined(path, getattr, lambda role, text: _Row(id=0, role=role, content=text))


def _consume(turns: list[dict]) -> list[dict]:
    """The prompt builder's part for dict and model rows: scan lines, request messages."""
    lines = [f"{'Mira' if t['role'] == 'assistant' else 'You'}: {t['content']}" for t in turns]
    assert lines
    if turns[-1]["role"] == "user":
        last = turns[-1]
        turns = [*turns[:-1], {"role": "user", "content": [
            {"type": "text", "text": last["content"]},
            {"type": "text", "text": "<post_history_instructions>…</post_history_instructions>"}]}]
    turns.append({"role": "assistant", "content": "prefix"})
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=80)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        db = Database(os.path.join(data, "app.db"))
        db.open()
        with db.transaction() as conn:
            personas.create_persona(conn, "bench001", {"name": "Mira"})
            sessions.create_session(conn, SID, "bench001")
            for i in range(args.messages):
                messages.add_message(conn, SID, "user" if i % 2 == 0 else "assistant",
                                     f"message {i} " + "lorem ipsum dolor sit amet " * 13)
        conn = db.conn()
        leaf = tree.active_leaf(conn, SID)
        assert leaf is not None

        def namedtuple_turn(limit: int) -> list[dict]:
            history = messages.history_for_prompt(conn, SID, limit, leaf)
            lines = [f"{'Mira' if m.role == 'assistant' else 'You'}: {m.content}"
                     for m in history]
            assert lines
            turns = prompts.with_post_history(history, "Stay in character.")
            turns.append({"role": "assistant", "content": "prefix"})
            return turns

        cases: dict[str, tuple[Callable[[int], object], Callable[[int], object]]] = {
            "dict": (lambda n: _dict_history(conn, leaf, n),
                     lambda n: _consume(_dict_history(conn, leaf, n))),
            "pydantic": (lambda n: _pydantic_history(conn, leaf, n),
                         lambda n: _consume([{"role": m.role, "content": m.content}
                                             for m in _pydantic_history(conn, leaf, n)])),
            "namedtuple": (lambda n: messages.history_for_prompt(conn, SID, n, leaf),
                           namedtuple_turn),
        }
        best: dict[tuple[int, str, int], float] = {}
        for _ in range(args.rounds):  # interleaved, so a busy spell hits every case alike
            for limit in (40, 80):
                for name, pair in cases.items():
                    for part, call in enumerate(pair):
                        seconds = timeit.timeit(partial(call, limit), time.process_time,
                                                number=args.number)
                        key = (limit, name, part)
                        best[key] = min(best.get(key, seconds), seconds)
        print(f"{'rows':>4}  {'form':<10} {'history_for_prompt':>19} {'+ consumer':>11}")
        for limit in (40, 80):
            for name in cases:
                read, turn = (best[limit, name, part] / args.number * 1e6 for part in (0, 1))
                print(f"{limit:>4}  {name:<10} {read:>16.1f} µs {turn:>8.1f} µs")
        db.close_thread()


if __name__ == "__main__":
    main()
