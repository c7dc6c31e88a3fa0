"""A separate process that owns cortex jobs, for the job-ownership tests.

    python -m tests.robustness.owner_child <data_dir> hold   # prints its token, holds until stdin closes
    python -m tests.robustness.owner_child <data_dir> exit   # prints its token and exits at once

`exit` leaves a zombie when the parent does not reap it: the pid still answers `kill(pid, 0)`.
"""
import sys

from src.utils.cortex.ownership import ProcessOwner


def main(argv: list[str]) -> int:
    data_dir, mode = argv
    owner = ProcessOwner(data_dir).open()
    print(owner.token, flush=True)
    if mode == "hold":
        sys.stdin.read()
        owner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
