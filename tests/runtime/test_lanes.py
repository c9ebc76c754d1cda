"""Vector dtypes (lanes > 1), such as PyTorch's float4_e2m1fn_x2 (code 17,
bits 4, lanes 2: two fp4 values in a byte): carried as the bytes they are.
Shape and strides count vector elements, itemsize is bits * lanes / 8 bytes,
exports keep the dtype as it came, copies are bytewise; what must read the
elements refuses: tolist() and float()/int()/complex() of a 0-d tensor with
TypeError, bool() of a one-element tensor with ValueError (a vector holds
several values, as an array does in NumPy), the buffer protocol (and so
np.asarray) with BufferError. Lanes are validated: 0 lanes, and vectors whose
bits * lanes is not whole bytes, are refused with BufferError."""
from __future__ import annotations

import ctypes
import gc
import operator

import numpy as np
import pytest

import godlpack
from harness import back_to, live
from ctypes_producer import IS_COPIED, CtypesProducer, read_legacy, read_versioned

try:
    import torch
except ImportError:  # the NumPy-only suite
    torch = None


# (id, dtype, backing array, shape and strides in vector elements, Tensor.dtype)
VECTORS = [
    ("float4_e2m1fnx2", (17, 4, 2), np.arange(12, dtype=np.uint8).reshape(3, 4), "float4_e2m1fnx2"),
    ("float32x4", (2, 32, 4), np.arange(48, dtype=np.float32).reshape(3, 4, 4), "float32x4"),
    ("float16x2", (2, 16, 2), np.arange(24, dtype=np.float16).reshape(3, 4, 2), "float16x2"),
    ("float6_e2m3fnx4", (15, 6, 4), np.arange(36, dtype=np.uint8).reshape(3, 4, 3), "float6_e2m3fnx4"),
    ("uint8x3", (1, 8, 3), np.arange(36, dtype=np.uint8).reshape(3, 4, 3), "uint8x3"),
]


def _producer(dtype, arr, **kw):
    """A producer of arr seen as a (3, 4) tensor of vectors (the last axis, if
    any, is the vector), strides in vector elements."""
    kw.setdefault("shape", [3, 4])
    kw.setdefault("strides", [4, 1])
    return CtypesProducer(arr, dtype=dtype, **kw)


def _itemsize(arr):
    return arr.nbytes // 12


def _bytes_of(t):
    """The bytes of a compact CPU tensor, read at its address."""
    return ctypes.string_at(t.data_ptr, t.nbytes)


def _vec(arr):
    """arr as a (3, 4) array of opaque vectors (one void item each)."""
    return np.ascontiguousarray(arr).view(np.dtype((np.void, _itemsize(arr)))).reshape(3, 4)


params = pytest.mark.parametrize("dtype,arr,name", [v[1:] for v in VECTORS], ids=[v[0] for v in VECTORS])


@params
def test_vector_tensor_keeps_shape_strides_and_sizes(dtype, arr, name):
    p = _producer(dtype, arr)
    t = godlpack.from_dlpack(p)
    assert t.shape == (3, 4) and t.strides == (4, 1) and t.size == 12 and t.ndim == 2
    assert t.itemsize == dtype[1] * dtype[2] // 8 == _itemsize(arr)
    assert t.nbytes == arr.nbytes
    assert t.dtype == name
    assert t.is_contiguous
    assert t.data_ptr == arr.ctypes.data
    assert f"dtype={name}" in repr(t)
    assert _bytes_of(t) == arr.tobytes()
    assert p.deleter_calls == 0
    del t
    gc.collect()
    assert p.deleter_calls == 1


@params
def test_vector_tensor_reexports_the_same_dtype(dtype, arr, name):
    p = _producer(dtype, arr)
    t = godlpack.from_dlpack(p)
    for versioned in (True, False):
        cap = t.__dlpack__(max_version=(1, 3) if versioned else None)
        m = read_versioned(cap) if versioned else read_legacy(cap)
        d = m.dl_tensor
        assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == dtype
        assert [d.shape[i] for i in range(2)] == [3, 4] and [d.strides[i] for i in range(2)] == [4, 1]
        assert d.data + d.byte_offset == arr.ctypes.data
        if versioned:
            assert m.flags == 0 and (m.version.major, m.version.minor) == (1, 3)
        del m, d
        u = godlpack.from_dlpack(cap)  # our own export, read back
        assert u.dtype == name and u.shape == (3, 4) and u.data_ptr == arr.ctypes.data
        del u, cap
    del t
    gc.collect()
    assert p.deleter_calls == 1


@params
def test_vector_tensor_copies_bytewise(dtype, arr, name):
    p = _producer(dtype, arr)
    t = godlpack.from_dlpack(p)
    for c in (t.copy(), godlpack.from_dlpack(t, copy=True), godlpack.from_dlpack(p, copy=True)):
        assert c.dtype == name and c.shape == (3, 4) and c.strides == (4, 1) and c.nbytes == arr.nbytes
        assert c.data_ptr != arr.ctypes.data
        assert _bytes_of(c) == arr.tobytes()
    cap = t.__dlpack__(max_version=(1, 3), copy=True)
    m = read_versioned(cap)
    assert m.flags & IS_COPIED
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == dtype
    assert ctypes.string_at(m.dl_tensor.data, arr.nbytes) == arr.tobytes()
    del m, cap, c, t
    gc.collect()
    assert p.deleter_calls == 2  # the view's producer tensor, and the one copied from p


@params
@pytest.mark.parametrize("shape,strides,index", [
    ([3, 2], [4, 2], (slice(None), slice(None, None, 2))),  # every other vector
    ([4, 3], [1, 4], (slice(None), slice(None))),  # transposed
    ([3, 4], [-4, 1], (slice(None, None, -1), slice(None))),  # rows reversed
], ids=["step-2", "transposed", "reversed"])
def test_strided_vector_views_copy_bytewise(dtype, arr, name, shape, strides, index):
    v = _vec(arr)
    want = (v.T if strides == [1, 4] else v)[index]
    offset = 8 * _itemsize(arr) if strides[0] < 0 else 0  # the first element of the last row
    p = _producer(dtype, arr, shape=shape, strides=strides, byte_offset=offset)
    t = godlpack.from_dlpack(p)
    assert t.shape == tuple(shape) and t.strides == tuple(strides) and not t.is_contiguous
    c = t.copy()
    assert c.shape == tuple(shape) and c.is_contiguous and c.nbytes == want.nbytes
    assert _bytes_of(c) == np.ascontiguousarray(want).tobytes()
    del c, t
    gc.collect()
    assert p.deleter_calls == 1


@params
def test_reading_vector_elements_is_refused(dtype, arr, name):
    p = _producer(dtype, arr)
    t = godlpack.from_dlpack(p)
    with pytest.raises(TypeError, match=f"vector dtype {name}"):
        t.tolist()
    with pytest.raises(BufferError, match=f"vector dtype {name}"):
        memoryview(t)
    with pytest.raises(BufferError, match=f"vector dtype {name}"):
        np.asarray(t)
    with pytest.raises(ValueError, match="more than one element"):
        bool(t)
    del t
    gc.collect()
    assert p.deleter_calls == 1


@params
def test_scalar_conversions_of_a_0d_vector_are_refused(dtype, arr, name):
    p = CtypesProducer(arr, dtype=dtype, shape=[], strides=[])
    t = godlpack.from_dlpack(p)
    assert t.shape == () and t.size == 1 and t.nbytes == t.itemsize == _itemsize(arr)
    for convert in (float, int, complex, operator.index):
        with pytest.raises(TypeError, match=f"vector dtype {name}"):
            convert(t)
    with pytest.raises(ValueError, match=f"vector dtype {name}"):
        bool(t)  # several values in one element: ambiguous, as for a NumPy array
    with pytest.raises(TypeError, match=f"vector dtype {name}"):
        t.tolist()
    one = godlpack.from_dlpack(_producer(dtype, arr, shape=[1, 1], strides=[1, 1]))
    with pytest.raises(ValueError, match=f"vector dtype {name}"):
        bool(one)
    del t, one
    gc.collect()
    assert p.deleter_calls == 1


@pytest.mark.parametrize("dtype,pattern", [
    ((2, 32, 0), r"invalid lanes.*0 lanes"),
    ((17, 4, 0), r"invalid lanes.*0 lanes"),
    ((17, 4, 3), r"invalid lanes.*12 bits"),  # 3 fp4 lanes: a byte and a half
    ((15, 6, 2), r"invalid lanes.*12 bits"),
    ((16, 6, 5), r"invalid lanes.*30 bits"),
    ((99, 8, 2), r"unsupported dtype"),  # an unknown code stays a dtype refusal
    ((3, 64, 2), r"unsupported dtype"),  # opaque handles too
], ids=["float32-0", "fp4-0", "fp4x3", "fp6x2", "fp6x5", "unknown-code", "opaque"])
def test_bad_lanes_are_refused_and_deleted_once(dtype, pattern):
    for versioned in (True, False):
        p = CtypesProducer(np.zeros(12, np.uint8), dtype=dtype, versioned=versioned, shape=[2], strides=[1])
        with pytest.raises(BufferError, match=pattern):
            godlpack.from_dlpack(p)
        assert p.deleter_calls == 1


@pytest.mark.parametrize("dtype,shape", [
    ((1, 8, 65535), [2**50]),  # 2**50 vectors of 64 KiB
    ((5, 128, 65535), [2**41]),  # the largest vector: 2**41 * 8388480 bits > 2**63
    ((2, 32, 4), [2**58, 2]),  # bytes overflow, elements do not
    ((17, 4, 2), [2**59, 8]),
], ids=["u8x65535", "c128x65535", "f32x4", "fp4x2"])
def test_huge_vector_spans_are_refused(dtype, shape):
    p = CtypesProducer(np.zeros(16, np.uint8), dtype=dtype, shape=shape, strides=[1] * len(shape) if len(shape) == 1
                       else [shape[1], 1])
    with pytest.raises(BufferError, match="(?i)overflow"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


def test_largest_vector_that_fits_is_accepted():
    """65535 lanes of complex128: 1 MiB per element, counted without overflow."""
    arr = np.zeros(2 * 65535 * 16, np.uint8)
    p = CtypesProducer(arr, dtype=(5, 128, 65535), shape=[2], strides=[1])
    t = godlpack.from_dlpack(p)
    assert t.dtype == "complex128x65535" and t.itemsize == 65535 * 16 and t.nbytes == arr.nbytes
    assert _bytes_of(t.copy()) == arr.tobytes()
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_empty_vector_view_of_huge_extents():
    """An empty view is never read, whatever its other extents."""
    p = CtypesProducer(np.zeros(1, np.uint8), dtype=(5, 128, 65535), shape=[2**62, 0], strides=[1, 1], data=0)
    t = godlpack.from_dlpack(p)
    assert t.size == 0 and t.nbytes == 0 and t.itemsize == 65535 * 16
    assert t.copy().nbytes == 0
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_broadcast_vector_nbytes_is_exact():
    """A stride-0 view may describe more bytes than int64 holds: nbytes is the exact integer."""
    p = CtypesProducer(np.zeros(16, np.uint8), dtype=(2, 32, 4), shape=[2**60, 4], strides=[0, 0])
    t = godlpack.from_dlpack(p)
    assert t.nbytes == 2**60 * 4 * 16
    with pytest.raises(MemoryError):
        t.copy()
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_dlpack_info_names_vector_dtypes():
    info = godlpack.dlpack_info()
    assert info["vector_dtypes"] == "{dtype}x{lanes}"
    assert info["vector_dtypes"].format(dtype="float4_e2m1fn", lanes=2) == "float4_e2m1fnx2"
    assert "float4_e2m1fnx2" not in info["dtypes"]  # the listed dtypes are the scalar ones


@pytest.mark.parametrize("dtype", [(17, 4, 2), (15, 6, 4)], ids=["fp4x2", "fp6x4"])
def test_padded_vectors_of_subbyte_lanes_are_refused(dtype):
    """IS_SUBBYTE_TYPE_PADDED on a vector of float4/float6 lanes could mean a
    byte per lane or per vector: refused rather than guessed at."""
    p = CtypesProducer(np.zeros(12, np.uint8), dtype=dtype, flags=1 << 2, shape=[2], strides=[1])
    with pytest.raises(BufferError, match="(?i)padded.*vector"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


# --- PyTorch's float4_e2m1fn_x2 ---------------------------------------------------------------

needs_fp4 = pytest.mark.skipif(torch is None or not hasattr(torch, "float4_e2m1fn_x2"),
                               reason="needs PyTorch with float4_e2m1fn_x2")


def _fp4(rows=3, cols=4):
    return torch.arange(rows * cols, dtype=torch.uint8).reshape(rows, cols).mul_(37).view(torch.float4_e2m1fn_x2)


@needs_fp4
@pytest.mark.parametrize("how", ["exchange", "dlpack", "capsule", "legacy-capsule"])
def test_torch_fp4x2_round_trip_keeps_the_bytes(how):
    base = live()
    x = _fp4()
    if how == "exchange":  # PyTorch's C exchange table
        src = x
    elif how == "dlpack":  # its __dlpack__ method, not the table
        class Wrap:
            def __dlpack__(self, **kw):
                return x.__dlpack__(**kw)

            def __dlpack_device__(self):
                return x.__dlpack_device__()
        src = Wrap()
    else:
        src = x.__dlpack__(max_version=(1, 3)) if how == "capsule" else x.__dlpack__()
    t = godlpack.from_dlpack(src)
    assert t.dtype == "float4_e2m1fnx2" and t.shape == (3, 4) and t.strides == (4, 1)
    assert t.itemsize == 1 and t.nbytes == 12 and t.data_ptr == x.data_ptr()
    for y in (torch.from_dlpack(t), torch.from_dlpack(t.__dlpack__()),
              torch.from_dlpack(t.__dlpack__(max_version=(1, 3)))):
        assert y.dtype == torch.float4_e2m1fn_x2 and y.shape == (3, 4) and y.stride() == (4, 1)
        assert y.data_ptr() == x.data_ptr()
        assert torch.equal(y.view(torch.uint8), x.view(torch.uint8))
    c = torch.from_dlpack(t.copy())
    assert c.dtype == torch.float4_e2m1fn_x2 and c.data_ptr() != x.data_ptr()
    assert torch.equal(c.view(torch.uint8), x.view(torch.uint8))
    del t, y, c, src
    assert back_to(base)


@needs_fp4
def test_torch_fp4x2_strided_views_copy_bytewise():
    base = live()
    x = _fp4(4, 6)
    for v in (x[:, ::2], x.t(), x[1:, 2:5], x[::3, 1:]):
        t = godlpack.from_dlpack(v)
        assert t.shape == tuple(v.shape) and t.strides == tuple(v.stride())
        assert t.data_ptr == v.data_ptr()
        y = torch.from_dlpack(t)
        assert y.stride() == v.stride() and torch.equal(y.view(torch.uint8), v.view(torch.uint8))
        c = torch.from_dlpack(t.copy())
        assert c.is_contiguous() and torch.equal(c.view(torch.uint8), v.contiguous().view(torch.uint8))
        c2 = torch.from_dlpack(godlpack.from_dlpack(v, copy=True))
        assert torch.equal(c2.view(torch.uint8), v.contiguous().view(torch.uint8))
    del t, y, c, c2
    assert back_to(base)


@needs_fp4
def test_torch_fp4x2_refusals():
    x = _fp4()
    t = godlpack.from_dlpack(x)
    with pytest.raises(TypeError, match="vector dtype float4_e2m1fnx2"):
        t.tolist()
    with pytest.raises(BufferError, match="vector dtype float4_e2m1fnx2"):
        memoryview(t)
    z = godlpack.from_dlpack(_fp4(1, 1).reshape(()))
    with pytest.raises(TypeError, match="vector dtype float4_e2m1fnx2"):
        float(z)
    with pytest.raises(ValueError, match="vector dtype float4_e2m1fnx2"):
        bool(z)
