"""100k exchanges without memory growth: the live counters come back to
baseline and RSS stays bounded."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import godlpack
from harness import child_env
from harness import back_to, live
from ctypes_producer import CtypesProducer

import psutil  # noqa: E402

N = 100_000
RSS_LIMIT = 20 * 1024 * 1024
# Under `make asan`/`make ubsan` the sanitizer's allocator keeps freed memory in
# quarantine: RSS says nothing there (the live counters are still asserted).
SANITIZED = bool(os.environ.get("GODLPACK_SANITIZER"))


def rss() -> int:
    gc.collect()
    return 0 if SANITIZED else psutil.Process().memory_info().rss


def test_100k_numpy_exchanges_do_not_grow():
    a = np.arange(64, dtype=np.float32)
    base = live()
    from_dlpack = godlpack.from_dlpack
    np_from = np.from_dlpack
    for _ in range(1000):  # warm up allocator caches
        np_from(from_dlpack(a))
    r0 = rss()
    for _ in range(N):
        b = np_from(from_dlpack(a))
    assert b.ctypes.data == a.ctypes.data
    del b
    grown = rss() - r0
    assert back_to(base)
    assert grown < RSS_LIMIT, f"RSS grew by {grown / 2**20:.1f} MiB over {N} exchanges"


def test_100k_torch_exchanges_do_not_grow():
    torch = pytest.importorskip("torch", reason="optional peer torch not installed")

    x = torch.arange(64, dtype=torch.float32)
    base = live()
    from_dlpack = godlpack.from_dlpack
    t_from = torch.from_dlpack
    for _ in range(1000):
        t_from(from_dlpack(x))
    r0 = rss()
    for _ in range(N // 2):
        y = t_from(from_dlpack(x))
    g = godlpack.zeros(64, "float32")
    for _ in range(N // 2):
        y = from_dlpack(t_from(g))
    assert y.data_ptr == g.data_ptr
    del y, g
    grown = rss() - r0
    assert back_to(base)
    assert grown < RSS_LIMIT, f"RSS grew by {grown / 2**20:.1f} MiB over {N} exchanges"


def test_capsules_and_copies_do_not_grow():
    g = godlpack.arange(256, dtype="int32")
    base = live()
    for _ in range(500):
        g.__dlpack__(max_version=(1, 3))
    r0 = rss()
    for i in range(20_000):
        cap = g.__dlpack__(max_version=(1, 3)) if i & 1 else g.__dlpack__()
        if i % 3 == 0:
            godlpack.from_dlpack(cap)
        del cap
        if i % 50 == 0:
            godlpack.from_dlpack(g, copy=True)
    grown = rss() - r0
    assert back_to(base)
    assert grown < RSS_LIMIT


def test_refused_tensors_do_not_leak():
    base = live()
    bad = CtypesProducer(np.zeros(4, np.float32), dtype=(99, 32, 1))
    for _ in range(2000):
        with pytest.raises(BufferError):
            godlpack.from_dlpack(bad)
    assert bad.deleter_calls == 2000
    assert all(r.calls == 1 for r in bad.records)
    assert back_to(base)


def test_godlpack_created_tensors_are_freed():
    base = live()
    r0 = rss()
    for _ in range(3000):
        t = godlpack.zeros(1 << 12, "float64")  # 32 KiB each, ~94 MiB in total
        np.from_dlpack(t)
    del t
    grown = rss() - r0
    assert back_to(base)
    assert grown < RSS_LIMIT


# --- a deep chain of imports is released without deep recursion ----------------

def test_deep_chain_releases_iteratively():
    # Each link: godlpack owns NumPy's export of an array that is a view of
    # godlpack's export of the previous link. Dropping the head used to recurse
    # through every link's deleter and overflow the C stack (segfault).
    code = textwrap.dedent("""
        import numpy as np, godlpack
        from godlpack import _godlpack
        base = _godlpack._live()
        g = godlpack.from_dlpack(np.arange(4, dtype=np.float64))
        for _ in range(200_000):
            g = godlpack.from_dlpack(np.from_dlpack(g))
        assert g.tolist() == [0.0, 1.0, 2.0, 3.0]
        del g
        assert _godlpack._live() == base, (_godlpack._live(), base)
        print("released")
    """)
    env = child_env()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and "released" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])
