"""Large tensors: zeros commits no memory up front, and copies let other
Python threads run (issue 12, item 13)."""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import psutil
import pytest

import godlpack

SANITIZED = bool(os.environ.get("GODLPACK_SANITIZER"))
GiB = 1 << 30


def rss() -> int:
    return psutil.Process().memory_info().rss


@pytest.mark.skipif(SANITIZED, reason="the sanitizer's allocator commits and poisons memory: RSS says nothing")
def test_zeros_of_a_gibibyte_commits_memory_lazily():
    r0 = rss()
    z = godlpack.zeros(GiB, "uint8")
    grown = rss() - r0
    # malloc + memset would commit the whole GiB at once; lazily zeroed pages
    # cost nothing until touched.
    assert grown < 64 << 20, f"zeros(1 GiB) committed {grown / 2**20:.0f} MiB up front"
    a = np.from_dlpack(z)
    assert a.shape == (GiB,)
    # The pages read as zero wherever they are, and writing one commits only it.
    assert a[:: 1 << 20].sum() == 0 and a[-1] == 0
    a[12345] = 7
    assert a[12345] == 7 and a[12344] == 0 and a[12346] == 0
    assert rss() - r0 < 128 << 20
    del a, z


def ticks_during(work) -> tuple[int, float]:
    """Runs work() on this thread while another thread counts loop iterations;
    returns the iterations seen strictly inside work's window and its length."""
    stamps: list[float] = []
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            stamps.append(time.perf_counter())

    th = threading.Thread(target=spin)
    th.start()
    started.wait()
    t0 = time.perf_counter()
    work()
    t1 = time.perf_counter()
    stop.set()
    th.join()
    # A margin on both sides: the switch into and out of the call may let the
    # spinner run a few iterations even if the copy held the GIL throughout.
    margin = 0.2 * (t1 - t0)
    return sum(t0 + margin < s < t1 - margin for s in stamps), t1 - t0


@pytest.mark.parametrize("how", ["method", "from_dlpack_copy"])
def test_copies_of_large_tensors_let_other_threads_run(how):
    # A strided source (every other element) so the copy is a real gather.
    src = np.ones(2 * (96 << 20) // 4, dtype=np.float32)[::2]
    t = godlpack.from_dlpack(src)

    def work():
        c = t.copy() if how == "method" else godlpack.from_dlpack(t, copy=True)
        assert c.shape == (src.shape[0],)

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        ticks, took = ticks_during(work)
    finally:
        sys.setswitchinterval(old)
    # Holding the GIL for the whole copy would leave the spinner at 0 inside
    # the window; releasing it lets it run thousands of times.
    assert ticks > 100, f"another thread ran {ticks} times during a {took * 1e3:.0f} ms copy"
