"""A separate process driving CortexService, for the crash and concurrency tests.

    python -m tests.cortex.cortex_child crash <data_dir> <persona_id> <seed>
    python -m tests.cortex.cortex_child edit  <data_dir> <persona_id> <tag> <count>
    python -m tests.cortex.cortex_child write <data_dir> <persona_id> <tag> <count>
    python -m tests.cortex.cortex_child step  <data_dir> <persona_id> <tag>

`crash` writes forever, printing `rev <id>` after each write, until it is killed. `edit` and
`write` print `ready`, wait for a line on stdin, then append `<tag>-<i>` lines: `edit` through
edit_file, `write` through read + write_file(expected_revision=…) retried on conflict. Each
success prints `ok <rev> <i>`; the end prints `done <conflicts>`. `step` prints `ready`, then
makes one edit_file (`<tag>-<i>`, printing `ok <rev> <i>`) per line it reads until stdin closes:
the test decides when each edit starts.
"""
import os
import random
import sys

from src.utils.cortex import CORTEX_FILES, CortexService, RevisionConflict
from src.utils.storage import Database

FILENAME = "memory.md"


def crash_content(serial: int, rng: random.Random) -> str:
    """A self-checking text: header and footer carry the same serial around a random-size body."""
    body = f"{serial:08d} " * rng.randint(1, 4000)
    return f"BEGIN {serial}\n{body}\nEND {serial}\n"


def _crash(service: CortexService, persona_id: str, seed: int) -> None:
    rng = random.Random(seed)
    serial = seed * 1_000_000
    while True:
        serial += 1
        rev = service.write_file(persona_id, rng.choice(CORTEX_FILES),
                                 crash_content(serial, rng), author="ai")
        print(f"rev {rev}", flush=True)


def _edit(service: CortexService, persona_id: str, tag: str, count: int) -> None:
    for i in range(count):
        _edit_once(service, persona_id, tag, i)
    print("done 0", flush=True)


def _edit_once(service: CortexService, persona_id: str, tag: str, i: int) -> None:
    line = f"{tag}-{i}\n"
    rev = service.edit_file(persona_id, FILENAME, lambda text: text + line, author="ai",
                            summary=line.strip())
    print(f"ok {rev} {i}", flush=True)


def _write(service: CortexService, persona_id: str, tag: str, count: int) -> None:
    conflicts = 0
    for i in range(count):
        while True:
            info = service.read_file_info(persona_id, FILENAME)
            os.sched_yield()
            try:
                rev = service.write_file(persona_id, FILENAME, info.content + f"{tag}-{i}\n",
                                         expected_revision=info.revision)
                break
            except RevisionConflict:
                conflicts += 1
        print(f"ok {rev} {i}", flush=True)
    print(f"done {conflicts}", flush=True)


def _step(service: CortexService, persona_id: str, tag: str) -> None:
    for i, _ in enumerate(sys.stdin):
        _edit_once(service, persona_id, tag, i)
    print("done 0", flush=True)


def main(argv: list[str]) -> int:
    mode, data_dir, persona_id, *rest = argv
    service = CortexService(data_dir, Database(os.path.join(data_dir, "app.db")))
    if mode == "crash":
        _crash(service, persona_id, int(rest[0]))
        return 0
    print("ready", flush=True)
    if mode == "step":
        _step(service, persona_id, rest[0])
        return 0
    sys.stdin.readline()
    {"edit": _edit, "write": _write}[mode](service, persona_id, rest[0], int(rest[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
