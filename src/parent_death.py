"""Ending with the parent: Linux's parent-death signal, for the children of the gunicorn master.

A process the master started must not outlive it, also when the master is SIGKILLed. Checking
the parent pid on a timer does it everywhere, but wakes the process for it (issue #23: the chat
workers checked every second). Where Linux offers it, the kernel sends SIGTERM instead, at once.
"""
import ctypes
import ctypes.util
import logging
import signal

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Asks Linux to send this process SIGTERM when its parent ends (SIGKILL included); True
    when armed. The caller checks `os.getppid()` afterwards: a parent that ended before this
    call sends nothing."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0:
            return True
    except (OSError, AttributeError):
        pass
    log.debug("No parent-death signal here; the parent pid is checked on a timer")
    return False
