"""godlpack's CUDA code (internal/cpython/cuda/) run against the stand-in CUDA driver
(tests/runtime/fakecuda/fakecuda.c), so copies, stream handshakes, host syncs and
context handling are exercised and asserted on machines without a GPU.

The driver is built here with the C compiler; each case of
tests/runtime/fakecuda/cases.py runs in its own process with GODLPACK_LIBCUDA naming
it (godlpack loads the driver once per process)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from harness import child_env
from fakecuda import driver

HERE = os.path.dirname(os.path.abspath(__file__))
CASE_FILES = {m: os.path.join(HERE, "fakecuda", f"{m}.py") for m in ("cases", "stream_cases", "pickle_cases")}
# Extra environment of some cases (read by the stand-in driver).
ENV = {"cases.case_the_driver_failing_to_start_says_why": {"FAKECUDA_INIT_RESULT": "100"}}


def _case_names() -> list[str]:
    """module.case_name for every case function."""
    out = []
    for module, path in CASE_FILES.items():
        with open(path) as f:
            tree = ast.parse(f.read())
        out += [f"{module}.{n.name}" for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("case_")]
    return out


@pytest.fixture(scope="session")
def fakecuda_lib(tmp_path_factory) -> str:
    return driver.build(str(tmp_path_factory.mktemp("fakecuda")))


def run_case(lib: str, name: str, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = child_env(HERE, GODLPACK_LIBCUDA=lib, **(extra_env or {}))
    module, case = name.split(".")
    code = f"import sys; sys.path[:0] = [{HERE!r}]\nfrom fakecuda import {module}\n{module}.{case}()\nprint('ok')\n"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=HERE)


@pytest.mark.parametrize("name", _case_names())
def test_with_the_stand_in_driver(fakecuda_lib, name):
    r = run_case(fakecuda_lib, name, ENV.get(name))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"


def test_the_stand_in_driver_counts_misuse(fakecuda_lib):
    """The stand-in itself: a copy outside device memory, a memory call
    without a context and an unbalanced pop are violations, not crashes."""
    code = r"""
import ctypes, numpy as np
from fakecuda.driver import FakeCuda
d = FakeCuda()
lib = d.lib
assert lib.cuInit(0) == 0
p = ctypes.c_ulonglong()
assert lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(8)) == 0  # no context
assert d.violations() == 1
buf = np.zeros(4)
assert lib.cuMemcpyDtoH_v2(ctypes.c_void_p(buf.ctypes.data), ctypes.c_ulonglong(p.value - 64), ctypes.c_size_t(8)) == 1
assert d.violations() == 3  # outside every allocation, and no context
assert lib.cuCtxPopCurrent_v2(None) != 0 and d.violations() == 4
assert "VIOLATION" in d.log() and d.count("cuMemAlloc_v2") == 1
print('ok')
"""
    env = dict(os.environ, GODLPACK_LIBCUDA=fakecuda_lib)
    r = subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0] = [{HERE!r}]\n" + code], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
