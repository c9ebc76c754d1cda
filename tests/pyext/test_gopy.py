"""gopy users: builds examples/gopy (a gopy module linking gopydl) and runs its
tests in a separate process, which must not hold godlpack's Go runtime too
(this process imported godlpack through conftest)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "gopy")


@pytest.fixture(scope="module")
def built():
    """The example built, held by this run until its tests are done: the
    build replaces examples/gopy/build/vecgopy, and CI runs this file with
    several Pythons at once (make test beside make test-pythons)."""
    import fcntl
    import time

    os.makedirs(os.path.join(EXAMPLE, "build"), exist_ok=True)
    with open(os.path.join(EXAMPLE, "build", ".lock"), "w") as lock:
        deadline = time.monotonic() + 1800  # the holder's build and tests are bounded by their timeouts
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "another run held examples/gopy/build for 30 minutes"
                time.sleep(0.5)
        r = subprocess.run(["bash", os.path.join(EXAMPLE, "build.sh"), sys.executable],
                           capture_output=True, text=True, timeout=900)
        if r.returncode == 3:
            pytest.skip(r.stderr.strip().splitlines()[-1])
        assert r.returncode == 0, f"examples/gopy/build.sh failed:\n{r.stdout}\n{r.stderr}"
        yield


def test_gopy_example_against_numpy(built):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--rootdir", EXAMPLE, os.path.join(EXAMPLE, "test_vecgopy.py")],
                       capture_output=True, text=True, cwd=EXAMPLE, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout


def test_gopy_module_holds_one_go_runtime(built):
    """The gopy module imported alone loads no godlpack extension."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = ("import sys; sys.path.insert(0, 'build'); from vecgopy import vecgopy, gopydl; "
            "print(sorted(m for m in sys.modules if 'godlpack' in m))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=EXAMPLE, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
