"""The memory process: cortex updates and session titles, beside the chat workers (issue #23).

`python -m src.app` serves chat from gunicorn's gevent workers; a turn that coincided with a
cortex update or a title request in the same worker paid for it (2–3 ms more per turn, and a
gevent worker runs every connection on one thread). So the master also starts this process
(`memory_supervisor.py`), one per server: it claims the cortex jobs and title requests the
workers queue in SQLite, under the same owner tokens and leases as before, and runs the
periodic scans (idle sessions, retractions, sleep). The workers only queue, and learn of what
finished here when it rings their news bells (`utils/process_bells.py`).

It is not for people to run: the master passes its pid (`--parent`), and the process ends when
that parent does, also after a SIGKILL (Linux's parent-death signal; a check every second only
where that is missing), so it is never left behind. The chat workers ring its doorbell when
they queue work (`utils/doorbell.py`), so an idle server's memory process sleeps. SIGTERM stops it after the job in
flight, or after STOP_SECONDS; a job cut short is failed as `interrupted` by the next owner's
recovery (its lock file is gone) and retried, like one of a crashed worker. Plain threads, no
gevent: nothing here serves connections. It runs at a lower scheduling priority (NICENESS): on
cores the chat is using it gets the time left over (about a tenth of a core under full load),
so an update in flight does not delay first chunks; when the chat is quiet it runs at full
speed.
"""
import argparse
import logging
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from .parent_death import die_with_parent

if TYPE_CHECKING:
    from .utils.services_root import Services

PARENT_CHECK_SECONDS = 1.0
STOP_SECONDS = 5.0  # within gunicorn's graceful timeout (10 s), with the runners' below
RUNNER_STOP_SECONDS = 1.0
NICENESS = 10  # when the cores are busy, the chat workers' turns come first

log = logging.getLogger("src.memory_process")


def main(argv: list[str] | None = None) -> int:
    """Runs until SIGTERM, SIGINT or the parent's end; 0 after a clean stop."""
    parser = argparse.ArgumentParser(prog="python -m src.memory_process")
    parser.add_argument("--parent", type=int, required=True, help="the gunicorn master's pid")
    parent = parser.parse_args(argv).parent
    check = None if die_with_parent() else PARENT_CHECK_SECONDS
    os.nice(NICENESS)
    if os.getppid() != parent:
        return 0  # the parent ended before the death signal was armed
    # Until the build is done SIGTERM keeps its default and ends the process at once: nothing
    # runs yet, and at this niceness a build on a busy machine can take many seconds.
    services = _build()
    stopping = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stopping.set())
    from .utils.services_root import start_memory, stop
    try:
        start_memory(services)
        log.info("Memory process %d runs cortex updates and titles", os.getpid())
        while not stopping.wait(check):
            if os.getppid() != parent:
                log.warning("The server's master process is gone; the memory process stops")
                break
    finally:
        for runner in services.title_runners:  # a title cut short: failed at the next start
            runner.stop(RUNNER_STOP_SECONDS)
        services.cortex_worker.stop(STOP_SECONDS)
        stop(services)
    return 0


def _build() -> "Services":
    """The app's services from the same settings the workers read (the environment), with the
    cortex worker on and nothing sent elsewhere."""
    from flask import Flask

    from . import config as config_module
    from .utils.logsafe import configure_logging
    from .utils.services_root import build_services
    config = config_module.load(Flask("src.app").instance_path, None)
    configure_logging(config["LOG_LEVEL"], bool(config.get("LOG_PROMPTS")))
    return build_services({**config, "CORTEX_WORKER": True, "MEMORY_PROCESS": False})


if __name__ == "__main__":
    sys.exit(main())
