"""Signals during long copies and exchanges (hostile classes): a
Python signal handler firing every half millisecond, and one that raises,
leave every result right, every deleter run once and nothing live. In a
child process, so a crash fails the test instead of ending the run."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from harness import child_env

STORM = textwrap.dedent("""
    import signal, time
    import numpy as np
    import godlpack
    from godlpack import _godlpack

    ticks = 0
    def tick(signum, frame):
        global ticks
        ticks += 1
    signal.signal(signal.SIGALRM, tick)
    src = np.arange(4 << 20, dtype=np.float32)[::2]  # a strided 8 MiB gather per copy
    base = _godlpack._live()
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    deadline = time.monotonic() + 120  # a bound, not the plan: slow builds (make asan) take longer
    rounds = 0
    while (rounds < 5 or ticks < 50) and time.monotonic() < deadline:
        t = godlpack.from_dlpack(src)
        c = t.copy()
        d = godlpack.from_dlpack(t, copy=True)
        back = np.from_dlpack(c)
        assert back[123] == src[123] and back[-1] == src[-1] and np.from_dlpack(d)[7] == src[7]
        z = godlpack.zeros(1 << 20, "float64")
        assert np.from_dlpack(z)[-1] == 0.0
        del t, c, d, back, z
        rounds += 1
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    assert _godlpack._live() == base, (_godlpack._live(), base)
    print(rounds, ticks)
""")

RAISING = textwrap.dedent("""
    import signal
    import numpy as np
    import godlpack
    from godlpack import _godlpack

    class Stop(Exception):
        pass
    def stop(signum, frame):
        raise Stop
    signal.signal(signal.SIGALRM, stop)
    src = np.arange(8 << 20, dtype=np.float32)[::2]
    base = _godlpack._live()
    stopped = 0
    for i in range(40):
        t = c = None
        try:
            # Armed inside the try: a short timer may fire as setitimer returns.
            signal.setitimer(signal.ITIMER_REAL, 0.0002 * (i + 1))
            t = godlpack.from_dlpack(src)
            c = t.copy()
            assert np.from_dlpack(c)[-1] == src[-1]
            signal.setitimer(signal.ITIMER_REAL, 0)
        except Stop:
            stopped += 1
        finally:
            t = c = None
    signal.setitimer(signal.ITIMER_REAL, 0)
    assert _godlpack._live() == base, (_godlpack._live(), base)
    print(stopped)
""")


def run(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-3000:])
    return r.stdout


def test_a_signal_storm_during_copies_changes_no_result():
    rounds, ticks = map(int, run(STORM).split())
    assert rounds >= 5 and ticks >= 50, (rounds, ticks)


def test_a_handler_that_raises_mid_copy_leaks_nothing():
    stopped = int(run(RAISING))
    assert stopped > 0  # the exception reached Python at least once, wherever it landed
