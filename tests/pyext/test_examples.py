"""The example Go extension (examples/vecmath) builds with godlpack's build
recipe and passes its own tests, in a process of its own: this one already
holds godlpack's Go runtime, and one runtime per process is the rule."""
import os
import subprocess
import sys
import sysconfig

import pytest
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "vecmath")


def test_vecmath_builds_and_passes_its_tests(tmp_path, vecmath_path):
    """Built once per run (conftest's vecmath_path), for every test here."""
    env = dict(os.environ, PYTHONPATH=vecmath_path)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::RuntimeWarning",
                        os.path.join(EXAMPLE, "test_vecmath.py"), os.path.join(EXAMPLE, "test_classes.py")],
                       cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout


def test_vecmath_gpu_arguments_with_the_stand_in_driver(tmp_path, vecmath_path):
    """vecmath's tests of arrays on a device, with a CUDA driver loaded (the
    stand-in, tests/runtime/fakecuda): the host synchronises only memory it reads."""
    if os.path.join(ROOT, "tests", "runtime") not in sys.path:  # the stand-in's package, when tests/pyext runs alone
        sys.path.insert(0, os.path.join(ROOT, "tests", "runtime"))
    from fakecuda import driver

    lib = driver.build(str(tmp_path))
    env = dict(os.environ, PYTHONPATH=vecmath_path, GODLPACK_LIBCUDA=lib)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::RuntimeWarning",
                        "-k", "gpu or managed or host_waits", os.path.join(EXAMPLE, "test_vecmath.py")], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout and "skipped" not in r.stdout, r.stdout


@pytest.mark.parametrize("first", ["vecmath", "godlpack"])
def test_vecmath_and_godlpack_in_one_process(vecmath_path, first):
    """Two Go runtimes, imported in either order: no warning, both chained,
    and tensors cross between them zero-copy both ways."""
    second = "godlpack" if first == "vecmath" else "vecmath"
    code = ("import warnings\n"
            "warnings.simplefilter('error', RuntimeWarning)\n"
            f"import {first}, {second}\n"
            "import numpy as np\n"
            "r = vecmath.add(np.ones(3), np.arange(3.0))\n"  # Go memory of vecmath's runtime
            "t = godlpack.from_dlpack(r)\n"
            "a = np.from_dlpack(r)\n"
            "g = godlpack.arange(4, dtype='float32')\n"  # Go memory of godlpack's runtime
            "vecmath.scale(g, 3.0)\n"
            "print(t.data_ptr == a.ctypes.data, t.tolist(), g.tolist())\n"
            "print(sorted((s, c) for _, s, _, c in godlpack.go_runtimes()))\n")
    r = subprocess.run([sys.executable, "-c", code], env=child_env(vecmath_path), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    shared, runtimes = r.stdout.strip().splitlines()
    assert shared == "True [1.0, 2.0, 3.0] [0.0, 3.0, 6.0, 9.0]", shared
    assert runtimes == "[(False, True), (True, True)]", runtimes


@pytest.mark.one_python
def test_vecmath_go_tests_pass():
    """examples/vecmath's own Go tests (its stub is the build's: no Go test keeps one)."""
    env = dict(os.environ, CGO_CFLAGS=f"-I{sysconfig.get_paths()['include']}", GOFLAGS="-buildvcs=false")
    r = subprocess.run(["go", "test", "-count=1", "./..."], cwd=EXAMPLE, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout


def test_the_demo_says_a_refcount_went_back_not_that_it_moved():
    r = subprocess.run([sys.executable, "-m", "godlpack", "demo", "--no-peers"], cwd=ROOT, env=child_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    import re

    for a, b in re.findall(r"refcount (\d+) -> (\d+)", r.stdout):
        assert a != b, f"'refcount {a} -> {b}' names no change: {r.stdout}"
    assert re.search(r"dropped its reference to b: refcount \d+ -> (\d+), back to \1 as before the export", r.stdout), r.stdout
