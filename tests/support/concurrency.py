"""Runs client functions side by side and re-raises the first failure in the test thread."""
import threading

JOIN_SECONDS = 60


def run_all(targets, join_seconds: float = JOIN_SECONDS) -> None:
    """`targets` are `(fn, *args)` tuples, each run in its own thread; fails if one hangs."""
    errors = []

    def guarded(fn, *args):
        try:
            fn(*args)
        except BaseException as exc:  # re-raised in the test thread below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(fn, *args)) for fn, *args in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(join_seconds)
    assert not any(thread.is_alive() for thread in threads), "a client hung"
    if errors:
        raise errors[0]
