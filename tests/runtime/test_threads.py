"""Frees from other threads, frees without the GIL, many threads at once."""
from __future__ import annotations

import ctypes
import gc
import queue
import threading

import numpy as np
import pytest

import godlpack
from harness import back_to, live
from ctypes_producer import DLManagedTensorVersioned, CtypesProducer, capsule_pointer

try:
    import torch
except ImportError:  # optional peer: the tests that need it skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="optional peer torch not installed")

_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_set_name.restype = ctypes.c_int
_USED = ctypes.create_string_buffer(b"used_dltensor_versioned")  # static: capsules keep the pointer
# A plain CFUNCTYPE call releases the GIL for the duration of the C call.
_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _in_thread(fn, *args):
    out = queue.Queue()

    def run():
        try:
            fn(*args)
            out.put(None)
        except BaseException as e:  # surfaced in the main thread
            out.put(e)

    th = threading.Thread(target=run)
    th.start()
    th.join(timeout=60)
    assert not th.is_alive()
    err = out.get_nowait()
    if err is not None:
        raise err
    return th


def test_last_reference_dropped_in_another_thread():
    a = np.arange(10, dtype=np.float64)
    p = CtypesProducer(a)
    box = [godlpack.from_dlpack(p)]
    box.append(godlpack.from_dlpack(box[0]))  # a second view of the same owner
    assert box[1].tolist() == a.tolist()
    main = threading.get_ident()
    worker = {}

    def drop():
        worker["id"] = threading.get_ident()
        box.clear()

    _in_thread(drop)
    assert p.deleter_calls == 1
    assert p.records[0].threads == [worker["id"]]
    assert worker["id"] != main


def test_go_memory_freed_in_another_thread():
    base = live()
    box = [godlpack.arange(1 << 16, dtype="float64") for _ in range(8)]
    arrays = [np.from_dlpack(t) for t in box]
    assert live() != base
    _in_thread(box.clear)
    assert arrays[3][123] == 123.0  # NumPy's exports keep the memory
    _in_thread(arrays.clear)
    assert back_to(base)


@needs_torch
@pytest.mark.parametrize("source", ["numpy", "ctypes", "go", "torch"])
def test_torch_tensors_from_godlpack_freed_in_other_threads(source):
    base = live()
    p = None
    if source == "numpy":
        g = godlpack.from_dlpack(np.arange(1000, dtype=np.float32))
    elif source == "ctypes":
        p = CtypesProducer(np.arange(1000, dtype=np.float32))
        g = godlpack.from_dlpack(p)
    elif source == "go":
        g = godlpack.arange(1000, dtype="float32")
    else:
        g = godlpack.from_dlpack(torch.arange(1000, dtype=torch.float32))
    ts = [torch.from_dlpack(g) for _ in range(20)]
    assert all(t.data_ptr() == g.data_ptr for t in ts)
    del g
    gc.collect()
    assert float(ts[0].sum()) == 499500.0
    halves = [ts[:10], ts[10:]]
    del ts
    threads = [threading.Thread(target=h.clear) for h in halves]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    del halves
    assert back_to(base)
    if p is not None:
        assert p.deleter_calls == 1


@pytest.mark.parametrize("source", ["go", "numpy", "ctypes"])
def test_deleters_called_concurrently_without_the_gil(source):
    """Calls godlpack's deleters from many threads at once with the GIL
    released (as PyTorch does): the shared owner's count must stay exact and
    its release run exactly once."""
    base = live()
    p = None
    if source == "go":
        g = godlpack.arange(4096, dtype="int64")
    elif source == "numpy":
        g = godlpack.from_dlpack(np.arange(4096, dtype=np.int64))
    else:
        p = CtypesProducer(np.arange(4096, dtype=np.int64))
        g = godlpack.from_dlpack(p)
    n_threads, per_thread = 8, 200
    work = []
    caps = []
    for _ in range(n_threads * per_thread):
        cap = g.__dlpack__(max_version=(1, 3))
        assert _set_name(cap, _USED) == 0  # we own it now, like a consumer
        addr = capsule_pointer(cap)
        m = DLManagedTensorVersioned.from_address(addr)
        work.append((m.deleter, addr))
        caps.append(cap)
    del caps  # renamed: their destructors must not call the deleters
    gc.collect()
    assert live()[1] >= base[1] + n_threads * per_thread
    del g
    gc.collect()
    assert p is None or p.deleter_calls == 0
    start = threading.Barrier(n_threads)

    def run(items):
        start.wait()
        for deleter, addr in items:
            _DELETER_T(deleter)(addr)

    threads = [threading.Thread(target=run, args=(work[i::n_threads],)) for i in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert back_to(base)
    if p is not None:
        assert p.deleter_calls == 1


@needs_torch
def test_many_threads_exchanging_at_once():
    base = live()
    shared = godlpack.arange(256, dtype="float32")
    shared_ptr = shared.data_ptr
    errors = []
    n_threads, iters = 8, 150

    def worker(k):
        try:
            for i in range(iters):
                a = np.full((4, 8), k * 1000 + i, dtype=np.int64)
                g = godlpack.from_dlpack(a)
                t = torch.from_dlpack(g)
                g2 = godlpack.from_dlpack(t)
                b = np.from_dlpack(g2)
                assert b.ctypes.data == a.ctypes.data
                assert int(b[3, 7]) == k * 1000 + i
                s = torch.from_dlpack(shared)
                assert s.data_ptr() == shared_ptr
                h = godlpack.from_dlpack(np.from_dlpack(shared))
                assert h.data_ptr == shared_ptr
                c = godlpack.from_dlpack(g2, copy=True)
                assert c.tolist()[0][0] == k * 1000 + i
                del a, g, t, g2, b, s, h, c
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    assert shared.tolist() == list(range(256))
    del shared
    assert back_to(base)


@needs_torch
def test_ctypes_producers_from_many_threads():
    producers = [CtypesProducer(np.arange(16, dtype=np.float32) + k) for k in range(6)]
    errors = []

    def worker(p):
        try:
            for _ in range(50):
                t = godlpack.from_dlpack(p)
                u = torch.from_dlpack(t)
                assert u[0].item() == p.array[0]
                del t, u
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(p,)) for p in producers]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    gc.collect()
    for p in producers:
        assert len(p.records) == 50
        assert p.deleter_calls == 50
        assert all(r.calls == 1 for r in p.records)
