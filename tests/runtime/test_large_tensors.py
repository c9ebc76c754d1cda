"""Large tensors: zeros commits no memory up front, and copies let other
Python threads run."""
from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import psutil
import pytest

import godlpack
import ctypes_producer as cp

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


# --- nbytes of huge packed broadcast views; overflowing strides ----------------

def test_nbytes_rounds_up_for_huge_packed_broadcast_views():
    # 2**62 + 1 float4 elements (stride 0): 2**61 + 0.5 bytes, i.e. 2**61 + 1.
    p = cp.CtypesProducer(np.zeros(1, np.uint8), dtype=(17, 4, 1), shape=[2**62 + 1], strides=[0])
    assert godlpack.from_dlpack(p).nbytes == 2**61 + 1


def test_size_one_dims_with_huge_strides():
    # A size-1 dimension's stride is never used, but stride * itemsize
    # overflowed int64 (undefined behaviour, seen by UBSan) in tolist() and
    # the buffer protocol.
    a = np.array([[1.5, 2.5]])
    p = cp.CtypesProducer(a, strides=[2**62, 1])
    t = godlpack.from_dlpack(p)
    assert t.tolist() == [[1.5, 2.5]]
    assert memoryview(t).tolist() == [[1.5, 2.5]]
    assert np.asarray(t).tolist() == [[1.5, 2.5]]
    e = godlpack.from_dlpack(cp.CtypesProducer(np.zeros((0, 2)), strides=[2**62, 2**62]))
    assert e.tolist() == [] and memoryview(e).tolist() == []


def test_empty_views_with_huge_strides():
    """An empty view's strides are never used, so validation does not bound
    them, even in extents of 2 or more: the buffer protocol and tolist must
    not multiply them (signed overflow, found by make ubsan)."""
    p = cp.CtypesProducer(np.zeros(1, np.float64), shape=[2, 0], strides=[2**62, 1])
    t = godlpack.from_dlpack(p)
    assert t.tolist() == [[], []]
    m = memoryview(t)
    assert m.shape == (2, 0) and m.nbytes == 0
    assert np.asarray(t).shape == (2, 0)
