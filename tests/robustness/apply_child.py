"""A separate process applying staged groups of cortex edits forever, for the crash test.

    python -m tests.robustness.apply_child <data_dir> <persona_id> <round>

Group `serial` (round * 1,000,000 + i) writes `group_files(serial)` with self-checking texts and
marks message id `serial` processed, printing `applied <serial>` after each group.
"""
import os
import random
import sys

from src.utils.cortex import CORTEX_FILES, CortexService
from src.utils.storage import Database


def group_files(serial: int) -> list[str]:
    """Which files group `serial` changes (one to three, reproducible from the serial)."""
    rng = random.Random(serial)
    return sorted(rng.sample(CORTEX_FILES, rng.randint(1, 3)))


def group_content(serial: int, filename: str) -> str:
    """Header and footer carry the serial around a body of random size (up to ~36 KB)."""
    rng = random.Random(f"{serial}/{filename}")
    body = f"{serial:08d} " * rng.randint(1, 4000)
    return f"BEGIN {serial} {filename}\n{body}\nEND {serial}\n"


def main(argv: list[str]) -> int:
    data_dir, persona_id, round_number = argv
    cortex = CortexService(data_dir, Database(os.path.join(data_dir, "app.db")))
    serial = int(round_number) * 1_000_000
    while True:
        serial += 1
        staged = cortex.stage(persona_id)
        for filename in group_files(serial):
            staged.write(filename, group_content(serial, filename))
        cortex.apply_staged(staged, message_range=(serial, serial), summary=f"group {serial}")
        print(f"applied {serial}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
