"""Shared fixtures: every test must leave godlpack's live counters as it found them."""
from __future__ import annotations

import gc
import os
import time

import pytest

import godlpack
from godlpack import _godlpack

import ctypes_producer

# `make asan`/`make ubsan` put the instrumented build first on the path: make
# sure it is the one under test, not the in-place build in python/.
_SANITIZER = os.environ.get("GODLPACK_SANITIZER")
if _SANITIZER and f"{os.sep}build{os.sep}{_SANITIZER}{os.sep}" not in _godlpack.__file__:
    raise RuntimeError(f"GODLPACK_SANITIZER={_SANITIZER} but the module under test is {_godlpack.__file__}")


# TensorFlow and PaddlePaddle are too large for CI's venv: their tests run in
# `make test-peers` only (mk/peers.mk), never as skips in `make test`.
collect_ignore = [] if os.environ.get("GODLPACK_LARGE_PEERS") else ["test_large_peers.py"]


def child_env(*first: str, **extra: str) -> dict[str, str]:
    """os.environ for a child Python that imports the godlpack build this
    process imported (python/, or make asan's instrumented one), with first
    ahead of it on PYTHONPATH."""
    home = os.path.dirname(os.path.dirname(godlpack.__file__))
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*first, home]), **extra)


def live() -> tuple[int, int]:
    """(live owners, live exported managed tensors)."""
    return tuple(_godlpack._live())


def _within(now: tuple[int, int], baseline: tuple[int, int]) -> bool:
    return all(n <= b for n, b in zip(now, baseline))


def settle(baseline: tuple[int, int], timeout: float = 3.0) -> tuple[int, int]:
    """Collects garbage until the live counters are back at (or below) baseline
    (frees done by peers on other threads may lag a little) or timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        now = live()
        if _within(now, baseline):
            return now
        gc.collect()
        now = live()
        if _within(now, baseline) or time.monotonic() > deadline:
            return now
        time.sleep(0.01)


def back_to(baseline: tuple[int, int]) -> bool:
    """True once nothing made since baseline is alive any more."""
    return _within(settle(baseline), baseline)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call":
        rep = outcome.get_result()
        item._call_failed = rep.failed or hasattr(rep, "wasxfail")


@pytest.fixture(autouse=True)
def no_leaks(request):
    """Fails a test that leaves owners or managed tensors alive, or that made
    the ctypes producer's deleter see an unknown pointer. Being autouse and
    first, it is torn down last: the other fixtures' values are gone by then
    except for the references pytest keeps in item.funcargs, dropped here."""
    before = live()
    orphans = ctypes_producer.orphan_calls()
    yield
    funcargs = getattr(request.node, "funcargs", None)
    if funcargs:
        funcargs.clear()
    if getattr(request.node, "_call_failed", False):
        return  # its traceback keeps its tensors alive: the failure says enough
    after = settle(before)
    # Below baseline is fine: a module-scoped fixture of some test file may
    # have been released meanwhile. Above it is a leak.
    assert _within(after, before), f"godlpack live (owners, exports) went {before} -> {after}"
    assert ctypes_producer.orphan_calls() == orphans, "a deleter was called with an unknown pointer"


@pytest.fixture
def get_capsule_name():
    return ctypes_producer.capsule_name


def torch_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def cupy_gpu() -> bool:
    try:
        import cupy
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def vecmath_path(tmp_path_factory) -> str:
    """A folder holding examples/vecmath built once per session, for tests
    that run it in processes of their own (one Go runtime per process)."""
    import subprocess
    import sys
    import sysconfig

    folder = tmp_path_factory.mktemp("vecmath")
    out = folder / ("vecmath" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                           cwd=os.path.join(ROOT, "examples", "vecmath"), capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    return str(folder)
