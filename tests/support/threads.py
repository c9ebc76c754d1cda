"""Work run in several Python threads at once, for the checks of what threads
do to shared objects: every thread starts together, each failure is
reported, and a thread that does not end fails the test instead of hanging it."""
from __future__ import annotations

import threading
from typing import Callable


def in_threads(work: Callable[[int], object], n: int = 8, timeout: float = 60) -> None:
    """Runs work(k) for k in range(n), each in a thread of its own, released
    together; re-raises the first exception a thread raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def run(k: int) -> None:
        try:
            barrier.wait(timeout)
            work(k)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), f"a thread did not finish within {timeout} s"
    if errors:
        raise errors[0]
