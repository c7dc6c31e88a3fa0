"""`python -m src.utils.heavy_child`: the process a gevent worker runs its CPU-heavy steps in.

A thread of the worker would share the worker's GIL: a decoder that holds it, or a pool thread
descheduled while holding it on a busy machine, would still stall the event loop for up to a
second. A child process has its own interpreter, so the worker's loop only waits for its pipe.
Requests and answers are length-prefixed pickles on stdin/stdout: `(module, function, args)` in,
`("ok", result)` or `("error", exception)` out, one at a time. The child ends when its stdin
closes (the worker stopped or died).
"""
from __future__ import annotations

import importlib
import os
import pickle
import struct
import sys
from typing import IO

HEADER = struct.Struct(">Q")


def write_message(stream: IO[bytes], value: object) -> None:
    """Writes one length-prefixed pickle and flushes."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_message(stream: IO[bytes]) -> object:
    """Reads one length-prefixed pickle; EOFError when the stream ended."""
    header = _read_exact(stream, HEADER.size)
    return pickle.loads(_read_exact(stream, HEADER.unpack(header)[0]))


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data or b"") != size:
        raise EOFError("the other side of the pipe is gone")
    return data


def _answer(request: tuple) -> tuple:
    module, name, args = request
    try:
        return "ok", getattr(importlib.import_module(module), name)(*args)
    except Exception as err:
        return "error", err


def main() -> int:
    """Answers requests until stdin closes."""
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to the log, never into the protocol
    while True:
        try:
            request = read_message(requests)
        except EOFError:
            return 0
        answer = _answer(request)  # type: ignore[arg-type]
        try:
            write_message(answers, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            write_message(answers, ("error", RuntimeError(f"unpicklable answer: {err!r}")))


if __name__ == "__main__":
    sys.exit(main())
