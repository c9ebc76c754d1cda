"""Helpers the tests share (imported by name: tests/conftest.py puts this
folder on sys.path): the tree's root, a child interpreter's environment, and
godlpack's live counters."""
from __future__ import annotations

import gc
import os
import time

import godlpack
from godlpack import _godlpack

SUPPORT = os.path.dirname(os.path.abspath(__file__))  # these helpers, for child interpreters too
ROOT = os.path.dirname(os.path.dirname(SUPPORT))


def child_env(*first: str, **extra: str) -> dict[str, str]:
    """os.environ for a child Python that imports the godlpack build this
    process imported (python/, or make asan's instrumented one), with first
    ahead of it on PYTHONPATH and the shared helpers (tests/support) after."""
    home = os.path.dirname(os.path.dirname(godlpack.__file__))
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*first, home, SUPPORT]), **extra)


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
