"""Core invariants each guarded by a direct test (the mutants of
tools/mutants.py that survived the rest of the suite): read-only memory stays
read-only through the buffer protocol and re-wraps, negative shapes are
refused, and exports, owners and Tensor objects are freed, counted in
objects and bytes rather than RSS."""
from __future__ import annotations

import ctypes
import gc
import io
import os
import sys

import numpy as np
import pytest

import godlpack
from harness import back_to, live
from ctypes_producer import READ_ONLY, CtypesProducer, read_versioned


def _readonly_tensor() -> tuple[np.ndarray, godlpack.Tensor]:
    a = np.arange(8, dtype=np.uint8)
    a.flags.writeable = False
    t = godlpack.from_dlpack(a)
    assert t.readonly
    return a, t


# --- READ_ONLY --------------------------------------------------------------------------------


def test_readonly_tensor_refuses_a_writable_buffer():
    a, t = _readonly_tensor()
    with pytest.raises((TypeError, BufferError)):  # readinto turns the BufferError into TypeError
        io.BytesIO(b"\xff" * 8).readinto(t)
    with pytest.raises(TypeError, match="not writable"):
        ctypes.c_char.from_buffer(t)
    assert a.tolist() == list(range(8))


def test_readonly_tensor_buffer_reports_readonly():
    a, t = _readonly_tensor()
    m = memoryview(t)
    assert m.readonly
    with pytest.raises(TypeError):
        m[0] = 255
    assert not np.asarray(t).flags.writeable
    assert a.tolist() == list(range(8))


def test_writable_tensor_takes_readinto():
    a = np.zeros(4, np.uint8)
    t = godlpack.from_dlpack(a)
    assert not t.readonly and not memoryview(t).readonly
    assert io.BytesIO(b"\x01\x02\x03\x04").readinto(t) == 4
    assert a.tolist() == [1, 2, 3, 4]


def test_rewrap_keeps_read_only():
    a, t = _readonly_tensor()
    for again in (godlpack.from_dlpack(t), godlpack.Tensor(t), godlpack.from_dlpack(t, device=(1, 0))):
        assert again.readonly
        cap = again.__dlpack__(max_version=(1, 3))  # alive while its struct is read
        assert read_versioned(cap).flags & READ_ONLY
        with pytest.raises((TypeError, BufferError)):
            io.BytesIO(b"\xff" * 8).readinto(again)
    assert a.tolist() == list(range(8))


def test_readonly_producer_flag_survives_import():
    p = CtypesProducer(np.arange(4, dtype=np.float32), flags=READ_ONLY)
    t = godlpack.from_dlpack(p)
    assert t.readonly
    cap = t.__dlpack__(max_version=(1, 3))  # alive while its struct is read
    assert read_versioned(cap).flags & READ_ONLY


# --- negative shapes (the C validator, the only one) ------------------------------------------


@pytest.mark.parametrize("shape", [[-1], [0, -1], [-1, 0], [3, -1], [-2, 0], [-(2**63)], [0, 2, -1]])
@pytest.mark.parametrize("versioned", [True, False])
def test_negative_shape_is_refused(shape, versioned):
    p = CtypesProducer(np.zeros(4, np.float32), versioned=versioned, shape=shape, strides=[1] * len(shape))
    with pytest.raises(BufferError, match="negative"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


@pytest.mark.parametrize("versioned", [True, False])
def test_int64_min_stride_is_refused_by_name(versioned):
    """|INT64_MIN| does not exist: the validator names the stride instead of
    computing with it (negating it is undefined behaviour)."""
    p = CtypesProducer(np.zeros(4, np.int8), versioned=versioned, shape=[2], strides=[-(2**63)])
    with pytest.raises(BufferError, match="INT64_MIN"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


@pytest.mark.parametrize("versioned", [True, False])
def test_stride_extent_that_wraps_is_refused(versioned):
    """(2**62 + 1) * 4 wraps to 4 in 64 bits: a validator that trusted the
    wrapped product would accept a view spanning 2**64 + 4 bytes."""
    p = CtypesProducer(np.zeros(4, np.int8), versioned=versioned, shape=[2**62 + 2], strides=[4])
    with pytest.raises(BufferError, match="overflow"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


def test_copy_true_of_a_godlpack_tensor_is_marked_copied():
    t = godlpack.arange(4.0)
    c = godlpack.from_dlpack(t, copy=True)
    assert c.is_copied and not t.is_copied
    assert c.data_ptr != t.data_ptr and c.tolist() == t.tolist()


def test_copy_true_onto_the_cpu_is_marked_copied():
    """A godlpack tensor in pinned host memory, copied onto the CPU."""
    a = np.arange(4.0)
    p = CtypesProducer(a, device=(3, 0))  # CUDAHost: CPU-accessible host memory
    t = godlpack.from_dlpack(p)
    c = godlpack.from_dlpack(t, device=(1, 0), copy=True)
    assert t.device == (3, 0) and c.device == (1, 0)
    assert c.is_copied and c.tolist() == a.tolist() and c.data_ptr != t.data_ptr
    del t, c
    gc.collect()
    assert p.deleter_calls == 1


# --- frees, counted -------------------------------------------------------------------------

_SANITIZED = bool(os.environ.get("GODLPACK_SANITIZER"))
_libc = ctypes.CDLL(None)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def c_heap_bytes() -> int:
    """Bytes malloc has handed out and not had back (glibc mallinfo2)."""
    f = _libc.mallinfo2
    f.restype = _MallInfo2
    m = f()
    return m.uordblks + m.hblkhd


needs_glibc_heap = pytest.mark.skipif(
    _SANITIZED or not hasattr(_libc, "mallinfo2"),
    reason="counts glibc's heap (mallinfo2): absent, or replaced by a sanitizer's allocator")


def _growth(fn, n: int) -> tuple[int, int]:
    """(C heap bytes, Python blocks) still allocated after n calls of fn, once warm."""
    for _ in range(200):
        fn()
    gc.collect()
    h0, b0 = c_heap_bytes(), sys.getallocatedblocks()
    for _ in range(n):
        fn()
    gc.collect()
    return c_heap_bytes() - h0, sys.getallocatedblocks() - b0


N = 20_000
# A leak of even one 64-byte struct per call would be N * 64 = 1.25 MiB; a
# leaked Python object per call N blocks.
HEAP_SLACK = 256 * 1024
BLOCK_SLACK = 2_000


@needs_glibc_heap
@pytest.mark.parametrize("kind", ["versioned", "legacy", "consumed"])
def test_exports_are_freed(kind):
    g = godlpack.arange(16, dtype="int32")
    base = live()
    if kind == "consumed":
        def fn():
            np.from_dlpack(g)
    else:
        mv = (1, 3) if kind == "versioned" else None
        def fn():
            g.__dlpack__(max_version=mv)
    heap, blocks = _growth(fn, N)
    assert back_to(base)
    assert heap < HEAP_SLACK, f"C heap grew {heap} bytes over {N} exports"
    assert blocks < BLOCK_SLACK, f"{blocks} Python blocks left over {N} exports"


@needs_glibc_heap
@pytest.mark.parametrize("make", ["empty", "copy", "zeros", "import", "rewrap"])
def test_tensors_and_their_memory_are_freed(make):
    a = np.arange(16.0)
    g = godlpack.from_dlpack(a)
    fns = {
        "empty": lambda: godlpack.empty(64, "float32"),
        "copy": lambda: g.copy(),
        "zeros": lambda: godlpack.zeros(64, "float32"),
        "import": lambda: godlpack.from_dlpack(a),
        "rewrap": lambda: godlpack.from_dlpack(g),
    }
    base = live()
    heap, blocks = _growth(fns[make], N)
    assert back_to(base)
    assert heap < HEAP_SLACK, f"C heap grew {heap} bytes over {N} tensors"
    assert blocks < BLOCK_SLACK, f"{blocks} Python blocks left over {N} tensors"
