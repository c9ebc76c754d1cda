"""Array requirements of Go extension functions (pyext.Require, Convert,
ConvertWriteBack, NDArray): builds the test extension tests/arrmod and runs
its tests (tests/arrmod/check_arrmod.py: NumPy, PyTorch, JAX and Dask
inputs, refusals, write-back, threads, leaks) in a process of its own, as
the extension brings its own Go runtime. (Named check_*, so that a run of
tests/ does not collect it in this process.)"""
import os

from gomod import build_and_check


def test_array_requirements_in_a_go_extension(tmp_path):
    out = build_and_check(tmp_path, "arrmod")
    # Skips only where a peer is missing (the NumPy-only suite) or RSS means nothing (sanitizers).
    if _have("torch", "jax", "dask") and not os.environ.get("GODLPACK_SANITIZER"):
        assert "skipped" not in out, out


def _have(*modules):
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)
