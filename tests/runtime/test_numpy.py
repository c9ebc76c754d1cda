"""NumPy <-> godlpack in both directions: zero-copy, every NumPy dtype, every
layout, read-only data."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import godlpack
from dtypes import NUMPY_DTYPES



def sample(dtype: str, shape=(3, 5)) -> np.ndarray:
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dt.kind == "c":
        return (np.arange(n) - 4 + 1j * np.arange(n)[::-1]).astype(dt).reshape(shape)
    if dt.kind == "u":
        return (np.arange(n, dtype=dt) * dt.type(7) + dt.type(np.iinfo(dt).max - 100)).reshape(shape)
    if dt.kind == "i":
        return (np.arange(n) * 3 - 20).astype(dt).reshape(shape) | np.array(np.iinfo(dt).min, dt) * (
            np.arange(n).reshape(shape) == 1
        )
    return ((np.arange(n) - 7) / 4).astype(dt).reshape(shape)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_to_godlpack_to_numpy_every_dtype(dtype):
    a = sample(dtype)
    t = godlpack.from_dlpack(a)
    assert t.dtype == dtype
    assert t.shape == a.shape
    assert t.strides == tuple(s // a.itemsize for s in a.strides)
    assert t.itemsize == a.itemsize and t.nbytes == a.nbytes and t.size == a.size
    assert t.data_ptr == a.ctypes.data
    assert t.tolist() == a.tolist()
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype
    assert b.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(b, a)
    c = np.asarray(t)  # buffer protocol
    assert c.dtype == a.dtype and c.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(c, a)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_godlpack_created_to_numpy_every_dtype(dtype):
    t = godlpack.full((4, 3), 1, dtype)
    assert t.dtype == dtype
    b = np.from_dlpack(t)
    assert b.dtype == np.dtype(dtype)
    assert b.ctypes.data == t.data_ptr
    np.testing.assert_array_equal(b, np.ones((4, 3), dtype))


def test_writes_are_shared_both_ways():
    a = np.zeros((2, 3), np.float64)
    t = godlpack.from_dlpack(a)
    b = np.from_dlpack(t)
    b[1, 2] = 7.5
    assert a[1, 2] == 7.5
    assert t.tolist()[1][2] == 7.5
    a[0, 0] = -1
    assert b[0, 0] == -1
    g = godlpack.zeros(4, "int32")
    n = np.from_dlpack(g)
    n[:] = [1, 2, 3, 4]
    assert g.tolist() == [1, 2, 3, 4]


def test_numpy_array_outlives_godlpack_tensor_and_source():
    g = godlpack.arange(10, dtype="float32")
    ptr = g.data_ptr
    n = np.from_dlpack(g)
    del g
    gc.collect()
    assert n.ctypes.data == ptr
    assert n.tolist() == list(range(10))
    a = np.arange(5.0)
    t = godlpack.from_dlpack(a)
    del a
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def _layouts():
    base = np.arange(6 * 5 * 4, dtype=np.float64).reshape(6, 5, 4)
    return {
        "contiguous": base,
        "transposed": base.T,
        "swapaxes": base.swapaxes(0, 1),
        "sliced": base[1:5, ::2, 1:],
        "step3": base[::3, :, ::3],
        "negative": base[::-1],
        "negative-inner": base[:, :, ::-1],
        "negative-all": base[::-2, ::-1, ::-3],
        "fortran": np.asfortranarray(base),
        "broadcast-zero-stride": np.broadcast_to(np.arange(4.0), (3, 4)),
        "zero-size": np.zeros((3, 0, 2)),
        "zero-size-strided": base[:, 2:2, ::2],
        "zero-d": np.array(2.5),
        "one-d": np.arange(7.0),
        "size1-odd-strides": np.lib.stride_tricks.as_strided(base, shape=(2, 1, 3, 1), strides=(32, 1016, 8, 8 * 77)),
    }


LAYOUTS = _layouts()


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layouts_round_trip(name):
    a = LAYOUTS[name]
    t = godlpack.from_dlpack(a)
    assert t.shape == a.shape
    assert t.ndim == a.ndim
    if a.size:
        assert t.data_ptr == a.ctypes.data
        # size-1 dims may carry any stride: only the others must match
        for i, (ts, ns) in enumerate(zip(t.strides, a.strides)):
            if a.shape[i] != 1:
                assert ts * 8 == ns
    assert t.is_contiguous == (a.flags.c_contiguous or a.size == 0)
    assert t.tolist() == a.tolist()
    b = np.from_dlpack(t)
    np.testing.assert_array_equal(b, a)
    if a.size:
        assert b.ctypes.data == a.ctypes.data
    m = np.asarray(memoryview(t))
    np.testing.assert_array_equal(m, a)
    c = t.copy()
    assert c.is_contiguous
    np.testing.assert_array_equal(np.from_dlpack(c), a)


def test_size1_odd_strides_are_contiguous():
    base = np.arange(6.0)
    a = np.lib.stride_tricks.as_strided(base, shape=(2, 1, 3), strides=(24, 999 * 8, 8))
    t = godlpack.from_dlpack(a)
    assert t.is_contiguous
    mv = memoryview(t)
    assert mv.c_contiguous
    assert np.from_dlpack(t).flags.c_contiguous
    assert t.tolist() == [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]


def test_negative_strides_are_kept():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, ::-1]
    t = godlpack.from_dlpack(a)
    assert t.strides == (-4, -1)
    assert not t.is_contiguous
    assert t.data_ptr == a.ctypes.data  # first element, not the lowest address
    assert t.tolist() == a.tolist()
    b = np.from_dlpack(t)
    assert b.strides == a.strides and b.ctypes.data == a.ctypes.data


@pytest.mark.parametrize("shape", [(1,) * 32, (1,) * 29 + (2, 3, 2), (2,) * 12 + (1,) * 20])
def test_32_dims(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    t = godlpack.from_dlpack(a)
    assert t.ndim == 32 and t.shape == shape
    assert t.data_ptr == a.ctypes.data
    b = np.from_dlpack(t)
    assert b.shape == shape and b.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(np.asarray(t), a)
    g = godlpack.arange(int(np.prod(shape)), dtype="int16")
    assert np.from_dlpack(g).reshape(shape).tolist() == a.tolist()


def test_64_dims_created_by_godlpack():
    g = godlpack.zeros((1,) * 64, "uint8")
    assert g.ndim == 64
    assert np.from_dlpack(g).shape == (1,) * 64
    with pytest.raises(ValueError):
        godlpack.zeros((1,) * 65, "uint8")


# --- read-only ---------------------------------------------------------------------------


def test_readonly_numpy_round_trip():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a.flags.writeable = False
    t = godlpack.from_dlpack(a)
    assert t.readonly
    assert "readonly" in repr(t)
    with pytest.raises(BufferError):
        t.__dlpack__()
    b = np.from_dlpack(t)
    assert not b.flags.writeable
    assert b.ctypes.data == a.ctypes.data
    with pytest.raises(ValueError):
        b[0, 0] = 1
    mv = memoryview(t)
    assert mv.readonly
    with pytest.raises(TypeError):
        mv[0, 0] = 1.0
    assert not np.asarray(t).flags.writeable
    u = godlpack.from_dlpack(t)
    assert u.readonly
    c = np.from_dlpack(t, copy=True)
    assert c.flags.writeable and c.ctypes.data != a.ctypes.data
    np.testing.assert_array_equal(c, a)


def test_writable_numpy_import_is_writable():
    a = np.arange(6, dtype=np.float32)
    t = godlpack.from_dlpack(a)
    assert not t.readonly
    assert np.from_dlpack(t).flags.writeable
    assert not memoryview(t).readonly


def test_numpy_copy_and_device_keywords():
    g = godlpack.arange(6, dtype="int64")
    c = np.from_dlpack(g, copy=True)
    assert c.ctypes.data != g.data_ptr and c.tolist() == list(range(6))
    z = np.from_dlpack(g, copy=False)
    assert z.ctypes.data == g.data_ptr
    d = np.from_dlpack(g, device="cpu")
    assert d.ctypes.data == g.data_ptr


def test_bfloat16_to_numpy_is_refused_or_right():
    g = godlpack.full((2, 2), 1.5, "bfloat16")
    assert g.dtype == "bfloat16"
    assert g.tolist() == [[1.5, 1.5], [1.5, 1.5]]
    # NumPy's own choice, which depends on its version and on whether ml_dtypes was
    # imported first (NumPy >= 2.5 then accepts bfloat16): a refusal, or the right values.
    try:
        a = np.from_dlpack(g)
    except (BufferError, TypeError, ValueError, RuntimeError):
        pass
    else:
        assert a.dtype.name == "bfloat16" and a.astype(np.float32).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    with pytest.raises(BufferError):
        memoryview(g)


# --- random layouts (hypothesis) --------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def strided_views(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(["int8", "uint16", "float32", "float64", "complex64", "bool"]))
    base = np.arange(int(np.prod(shape)) if shape else 1).astype(dtype).reshape(shape)
    index = []
    for n in shape:
        step = draw(st.sampled_from([1, 2, -1, -2, 3]))
        start = draw(st.integers(0, max(n - 1, 0)))
        index.append(slice(start, None, step) if step > 0 else slice(None, start if start else None, step))
    view = base[tuple(index)] if ndim else base
    if ndim > 1 and draw(st.booleans()):
        view = view.transpose(draw(st.permutations(range(ndim))))
    return view


@settings(max_examples=150, deadline=None)
@given(strided_views())
def test_random_strided_views_round_trip(view):
    t = godlpack.from_dlpack(view)
    assert t.shape == view.shape
    assert t.tolist() == view.tolist()
    if view.size:
        assert t.data_ptr == view.ctypes.data
        assert all(ts * view.itemsize == ns for ts, ns, n in zip(t.strides, view.strides, view.shape) if n != 1)
    back = np.from_dlpack(t)
    assert back.shape == view.shape and back.tolist() == view.tolist()
    if view.size:
        assert back.ctypes.data == view.ctypes.data
    assert np.asarray(t).tolist() == view.tolist()
    c = godlpack.from_dlpack(view, copy=True)  # NumPy copies (keeping its layout order)
    assert c.is_copied and c.tolist() == view.tolist()
    if view.size:
        assert c.data_ptr != view.ctypes.data
    d = t.copy()  # godlpack's own copies are always compact
    assert d.is_contiguous and d.tolist() == view.tolist()
