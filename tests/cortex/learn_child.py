"""A separate process that runs the queued cortex jobs (a learn run) until it is killed.

    python -m tests.cortex.learn_child <app config as JSON>
"""
import json
import sys

from src.app import create_app
from src.utils import provider


def main(config: str) -> None:
    """Runs the queued jobs in this process's cortex worker, then says so."""
    app = create_app(json.loads(config))
    provider.get_cortex_worker(app).run_pending()
    print("finished", flush=True)
    provider.shutdown_services(app)


if __name__ == "__main__":
    main(sys.argv[1])
