"""Array requirements of Go extension functions (pyext.Require, Convert,
ConvertWriteBack, NDArray): builds the test extension tests/arrmod and runs
its tests (tests/arrmod/check_arrmod.py: NumPy, PyTorch, JAX and Dask
inputs, refusals, write-back, threads, leaks) in a process of its own, as
the extension brings its own Go runtime. (Named check_*, so that a run of
tests/ does not collect it in this process.)"""
import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARRMOD = os.path.join(ROOT, "tests", "arrmod")


def test_array_requirements_in_a_go_extension(tmp_path):
    out = tmp_path / ("arrmod" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "./tests/arrmod"],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # --noconftest: tests/conftest.py imports godlpack (a second Go runtime).
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
                        "-W", "error::RuntimeWarning", os.path.join(ARRMOD, "check_arrmod.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout
    # Skips only where a peer is missing (the NumPy-only suite) or RSS means nothing (sanitizers).
    if _have("torch", "jax", "dask") and not os.environ.get("GODLPACK_SANITIZER"):
        assert "skipped" not in r.stdout, r.stdout


def _have(*modules):
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)
