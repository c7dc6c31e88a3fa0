"""A separate process proposing and accepting memory proposals until it is killed.

    python -m tests.cortex.review_child <data_dir> <persona_id> <seed>

Each round stages an insert into memory.md and soul.md, stores it as a proposal (as a
review-mode run does), prints `proposed <id>`, accepts it and prints `accepted <id>`.
"""
import os
import sys

from src.utils.cortex import CortexService
from src.utils.cortex.review import ProposalService
from src.utils.storage import Database


def main(data_dir: str, persona_id: str, seed: str) -> None:
    """Loops until killed."""
    db = Database(os.path.join(data_dir, "app.db"))
    cortex = CortexService(data_dir, db)
    proposals = ProposalService(cortex, db)
    serial = 0
    while True:
        serial += 1
        staged = cortex.stage(persona_id)
        for name in ("memory.md", "soul.md"):
            staged.insert(name, 0, f"- note {seed}-{serial} " + "x" * (serial % 7) * 500)
        proposal_id = proposals.propose(staged, job_id=f"job{seed}{serial}", kind="update",
                                        summary=f"round {serial}")
        print(f"proposed {proposal_id}", flush=True)
        proposals.accept(persona_id, proposal_id)
        print(f"accepted {proposal_id}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
