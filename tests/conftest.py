"""Shared fixtures: every test must leave godlpack's live counters as it found them."""
from __future__ import annotations

import gc
import os
import sys

import pytest

from godlpack import _godlpack

# The shared helpers (harness, ctypes_producer, gomod, dtypes) are imported by
# name, whatever rootdir or pytest config runs the tests (make wheels runs them
# with none).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))

import ctypes_producer  # noqa: E402
import gomod  # noqa: E402
from harness import ROOT, _within, live, settle  # noqa: E402

# tests/pyext/NAME/check_NAME.py (pyproject's python_files) import the test
# extension NAME, which is built on that first import, once per run.
gomod.install_finder()

# `make asan`/`make ubsan` put the instrumented build first on the path: make
# sure it is the one under test, not the in-place build in python/.
_SANITIZER = os.environ.get("GODLPACK_SANITIZER")
if _SANITIZER and f"{os.sep}build{os.sep}{_SANITIZER}{os.sep}" not in _godlpack.__file__:
    raise RuntimeError(f"GODLPACK_SANITIZER={_SANITIZER} but the module under test is {_godlpack.__file__}")


# TensorFlow and PaddlePaddle are too large for CI's venv: their tests run in
# `make test-peers` only (mk/peers.mk), never as skips in `make test`.
collect_ignore = [] if os.environ.get("GODLPACK_LARGE_PEERS") else ["runtime/test_large_peers.py"]


def pytest_collection_modifyitems(items):
    # A test extension's checks hold it to no RuntimeWarning (a coroutine never
    # awaited, a finalizer's error): each one fails the check that caused it.
    for item in items:
        if item.path.name.startswith("check_"):
            item.add_marker(pytest.mark.filterwarnings("error::RuntimeWarning"))


@pytest.fixture(autouse=True, scope="module")
def _frozen_heap():
    """What is alive when a test file starts (the modules imported, torch's and
    JAX's among them: 300,000 objects) is moved out of the collector's reach,
    so each gc.collect() of the tests' leak checks walks only what the file's
    tests made: 5 ms, not 140. Garbage is collected first; what the file makes
    stays collectable. Module-scoped, so what an earlier file's tests imported
    is frozen too."""
    gc.collect()
    gc.freeze()
    yield


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
