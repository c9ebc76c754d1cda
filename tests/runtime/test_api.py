"""The public API: Tensor properties, tolist, buffer protocol, repr, the
creation functions, dlpack_info, is_cpu_accessible, Device, the CLI demo."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import godlpack
from dtypes import NUMPY_DTYPES as ALL_NUMPY
from ctypes_producer import CtypesProducer
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



# --- properties -------------------------------------------------------------------------


def test_properties_of_a_strided_view():
    a = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)[:, ::-1, 1::2]
    t = godlpack.from_dlpack(a)
    assert t.shape == (2, 3, 2)
    assert t.strides == (12, -4, 2)  # elements, not bytes
    assert t.ndim == 3
    assert t.size == 12
    assert t.itemsize == 2
    assert t.nbytes == 24
    assert t.dtype == "int16" and isinstance(t.dtype, str)
    assert t.device == (1, 0)
    assert isinstance(t.device, godlpack.Device)
    assert t.device.device_type == godlpack.DLDeviceType.CPU and t.device.device_id == 0
    assert str(t.device) == "cpu:0"
    assert t.readonly is False and t.is_copied is False
    assert t.is_contiguous is False
    assert t.data_ptr == a.ctypes.data
    assert isinstance(t.data_ptr, int)
    for name in ("shape", "strides", "ndim", "size", "dtype", "device", "data_ptr", "readonly"):
        with pytest.raises(AttributeError):
            setattr(t, name, None)


@pytest.mark.parametrize("dtype", ALL_NUMPY + ["bfloat16"])
def test_itemsize_nbytes_per_dtype(dtype):
    t = godlpack.zeros((3, 5), dtype)
    size = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    assert t.itemsize == size
    assert t.nbytes == 15 * size
    assert t.size == 15
    assert t.strides == (5, 1)
    assert t.is_contiguous


def test_is_contiguous_cases():
    base = np.zeros((4, 6))
    assert godlpack.from_dlpack(base).is_contiguous
    assert not godlpack.from_dlpack(base.T).is_contiguous
    assert not godlpack.from_dlpack(base[:, ::2]).is_contiguous
    assert godlpack.from_dlpack(base[1:3]).is_contiguous
    assert godlpack.from_dlpack(base[:, :0]).is_contiguous  # empty
    assert godlpack.from_dlpack(np.array(1.0)).is_contiguous  # 0-d
    assert godlpack.from_dlpack(base[:1, :]).is_contiguous
    odd = np.lib.stride_tricks.as_strided(base, shape=(1, 6, 1), strides=(8 * 1001, 8, 8 * 55))
    assert godlpack.from_dlpack(odd).is_contiguous


def test_weakref_and_type():
    t = godlpack.zeros(3)
    r = weakref.ref(t)
    assert r() is t
    del t
    gc.collect()
    assert r() is None
    assert godlpack.Tensor.__name__ == "Tensor"
    assert isinstance(godlpack.zeros(1), godlpack.Tensor)


def test_repr():
    t = godlpack.zeros((2, 3), "float32")
    assert repr(t) == "godlpack.Tensor(shape=(2, 3), dtype=float32, device=cpu:0)"
    a = np.zeros(4, np.uint8)
    a.flags.writeable = False
    assert repr(godlpack.from_dlpack(a)) == "godlpack.Tensor(shape=(4,), dtype=uint8, device=cpu:0, readonly)"
    assert repr(godlpack.full((), 1.0, "bfloat16")) == "godlpack.Tensor(shape=(), dtype=bfloat16, device=cpu:0)"


# --- tolist ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_NUMPY)
def test_tolist_matches_numpy(dtype):
    a = np.arange(-6, 18).reshape(2, 3, 4)
    a = (a % 2 == 0) if dtype == "bool" else a.astype(dtype) if not dtype.startswith("complex") else (a + 0.5j * a).astype(dtype)
    for v in (a, a[:, ::-1, ::2], a.transpose(2, 0, 1), a[0, 0, 0]):
        v = np.asarray(v)
        t = godlpack.from_dlpack(v)
        got = t.tolist()
        assert got == v.tolist()
        flat = np.ravel(np.asarray(got, dtype=object)) if v.ndim else [got]
        assert all(type(x) is type(y) for x, y in zip(flat, np.ravel(np.asarray(v.tolist(), dtype=object))))


def test_tolist_bfloat16_and_special_values():
    t = godlpack.full((2,), float("inf"), "bfloat16")
    assert t.tolist() == [float("inf")] * 2
    nan = godlpack.full((1,), float("nan"), "float16").tolist()[0]
    assert nan != nan
    assert godlpack.arange(-2, 2, dtype="bfloat16").tolist() == [-2.0, -1.0, 0.0, 1.0]


def test_tolist_0d_and_empty():
    assert godlpack.full((), 7, "int32").tolist() == 7
    assert godlpack.zeros((0,)).tolist() == []
    assert godlpack.zeros((2, 0)).tolist() == [[], []]
    assert godlpack.zeros((0, 2)).tolist() == []


def test_tolist_unsupported_dtype_is_typeerror():
    t = godlpack.zeros(3, "float8_e4m3fn")
    assert t.dtype == "float8_e4m3fn"
    with pytest.raises(TypeError, match="float8_e4m3fn"):
        t.tolist()


# --- buffer protocol -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,fmt",
    [
        ("bool", "?"),
        ("int8", "b"),
        ("int16", "h"),
        ("int32", "i"),
        ("int64", "q"),
        ("uint8", "B"),
        ("uint16", "H"),
        ("uint32", "I"),
        ("uint64", "Q"),
        ("float16", "e"),
        ("float32", "f"),
        ("float64", "d"),
        ("complex64", "Zf"),
        ("complex128", "Zd"),
    ],
)
def test_memoryview_formats(dtype, fmt):
    t = godlpack.full((2, 3), 1, dtype)
    m = memoryview(t)
    assert m.format == fmt
    assert m.shape == (2, 3)
    assert m.strides == (3 * t.itemsize, t.itemsize)
    assert m.itemsize == t.itemsize and m.nbytes == t.nbytes
    assert not m.readonly
    assert m.c_contiguous
    n = np.asarray(t)
    assert n.dtype == np.dtype(dtype)
    assert n.ctypes.data == t.data_ptr
    np.testing.assert_array_equal(n, np.ones((2, 3), dtype))
    m.release()


def test_memoryview_strided_and_writes():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    t = godlpack.from_dlpack(a[::-1, 1::2])
    m = memoryview(t)
    assert m.shape == (4, 3)
    assert m.strides == (-48, 16)
    assert not m.c_contiguous
    assert m.tolist() == a[::-1, 1::2].tolist()
    n = np.asarray(t)
    n[0, 0] = -1
    assert a[3, 1] == -1
    with pytest.raises(BufferError):
        np.ascontiguousarray(np.frombuffer(t, dtype=np.float64))  # PyBUF_SIMPLE needs contiguous


def test_memoryview_0d_and_empty():
    m = memoryview(godlpack.full((), 2.5))
    assert m.shape == () and m.tolist() == 2.5
    e = memoryview(godlpack.zeros((0, 4), "int32"))
    assert e.shape == (0, 4) and e.nbytes == 0


def test_memoryview_keeps_tensor_alive():
    g = godlpack.arange(5, dtype="int64")
    m = memoryview(g)
    del g
    gc.collect()
    assert m.tolist() == [0, 1, 2, 3, 4]
    m.release()


def test_buffer_refused_for_bfloat16_and_float8():
    for dt in ("bfloat16", "float8_e5m2"):
        with pytest.raises(BufferError):
            memoryview(godlpack.zeros(2, dt))


# --- creation functions ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_NUMPY + ["bfloat16"])
def test_zeros_empty_full(dtype):
    z = godlpack.zeros((3, 4), dtype)
    e = godlpack.empty((3, 4), dtype)
    f = godlpack.full((3, 4), 1, dtype)
    for t in (z, e, f):
        assert t.shape == (3, 4) and t.dtype == dtype and t.device == (1, 0)
        assert t.data_ptr % 64 == 0
        assert not t.readonly and not t.is_copied
    assert len({z.data_ptr, e.data_ptr, f.data_ptr}) == 3
    if dtype == "bfloat16":
        assert z.tolist() == [[0.0] * 4] * 3
        assert f.tolist() == [[1.0] * 4] * 3
    else:
        np.testing.assert_array_equal(np.from_dlpack(z), np.zeros((3, 4), dtype))
        np.testing.assert_array_equal(np.from_dlpack(f), np.ones((3, 4), dtype))


def test_full_values_and_default_dtypes():
    assert godlpack.full(3, 7).dtype == "int64"
    assert godlpack.full(3, 7).tolist() == [7, 7, 7]
    assert godlpack.full(2, 2.5).dtype == "float64"
    assert godlpack.full(2, True).dtype == "bool" and godlpack.full(2, True).tolist() == [True, True]
    c = godlpack.full((2, 1), 1 - 2j)
    assert c.dtype == "complex128" and c.tolist() == [[1 - 2j], [1 - 2j]]
    assert godlpack.full((2,), -3, "int8").tolist() == [-3, -3]
    assert godlpack.full((2,), 0.1, "float32").tolist() == [float(np.float32(0.1))] * 2
    assert godlpack.full((2,), 3 + 4j, "complex64").tolist() == [3 + 4j] * 2
    assert godlpack.full((2,), -2**31, "int32").tolist() == [-2**31] * 2


def test_arange_like_numpy():
    cases = [
        ((5,), {}),
        ((2, 10, 3), {}),
        ((5, 0, -1), {}),
        ((0, 1, 0.25), {}),
        ((0, 1, 0.1), {}),
        ((-3, 3), {"dtype": "int8"}),
        ((0, 10, 2), {"dtype": "float32"}),
        ((0, 5), {"dtype": "uint16"}),
        ((3, 3), {}),
        ((3, 0), {}),
    ]
    for args, kw in cases:
        t = godlpack.arange(*args, **kw)
        ref = np.arange(*args, **kw)
        assert t.dtype == str(ref.dtype), (args, kw)
        assert t.shape == ref.shape, (args, kw)
        np.testing.assert_allclose(np.from_dlpack(t), ref, rtol=0, atol=1e-12)


def test_creation_errors():
    with pytest.raises(ValueError, match="dtype"):
        godlpack.zeros(3, "float128")
    with pytest.raises(ValueError):
        godlpack.empty((2, -1))
    with pytest.raises(TypeError):
        godlpack.zeros((1.5,))
    with pytest.raises(ValueError):
        godlpack.arange(0, 1, 0)
    with pytest.raises(ValueError):
        godlpack.zeros((1,) * 65)


def test_created_tensors_are_independent_and_freed():
    ts = [godlpack.arange(10, dtype="int32") for _ in range(5)]
    assert len({t.data_ptr for t in ts}) == 5
    np.from_dlpack(ts[0])[:] = 0
    assert ts[1].tolist() == list(range(10))


def test_full_and_arange_exact_for_large_integers():
    assert godlpack.full(2, 2**53 + 1, "int64").tolist() == [2**53 + 1] * 2
    assert godlpack.full(2, 2**63 - 1, "int64").tolist() == [2**63 - 1] * 2
    assert godlpack.full(2, -(2**63), "int64").tolist() == [-(2**63)] * 2
    assert godlpack.full(2, 2**64 - 1, "uint64").tolist() == [2**64 - 1] * 2
    assert godlpack.arange(2**62, 2**62 + 3).tolist() == [2**62, 2**62 + 1, 2**62 + 2]
    assert godlpack.arange(10, 0, -3, dtype="int8").tolist() == [10, 7, 4, 1]


# --- copy() --------------------------------------------------------------------------------------


def test_copy_method():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::-2]
    t = godlpack.from_dlpack(a)
    c = t.copy()
    assert c.data_ptr != t.data_ptr and c.data_ptr % 64 == 0
    assert c.is_contiguous and c.strides == (2, 1)
    assert c.tolist() == a.tolist()
    assert not c.readonly and not c.is_copied
    a[0, -1] = 99
    assert c.tolist()[0][0] == 3.0


# --- module functions ---------------------------------------------------------------------------


def test_dlpack_info():
    info = godlpack.dlpack_info()
    assert info["api_version"] == (1, 3)
    assert info["max_version"][0] == 1
    assert isinstance(info["abi_version"], int)
    for name in ALL_NUMPY + ["bfloat16", "float8_e4m3fn", "float4_e2m1fn"]:
        assert name in info["dtypes"]
    assert info["device_types"]["cpu"] == 1
    assert info["device_types"]["cuda"] == 2
    assert info["device_types"]["cuda_host"] == 3
    assert info["device_types"]["trn"] == 18
    t = godlpack.zeros(1)
    assert t.__dlpack_info__() == info


@pytest.mark.parametrize("dev", list(godlpack.DLDeviceType))
def test_is_cpu_accessible_per_device_type(dev):
    expect = dev.value in (1, 3, 11, 13)
    assert godlpack.is_cpu_accessible(dev) is expect
    assert godlpack.is_cpu_accessible(int(dev)) is expect
    assert godlpack.is_cpu_accessible((int(dev), 0)) is expect
    assert godlpack.is_cpu_accessible(godlpack.Device(int(dev), 3)) is expect


def test_is_cpu_accessible_unknown_and_bad():
    assert godlpack.is_cpu_accessible(99) is False
    assert godlpack.is_cpu_accessible(0) is False
    with pytest.raises(TypeError):
        godlpack.is_cpu_accessible("cpu")
    with pytest.raises(TypeError):
        godlpack.is_cpu_accessible((1,))


def test_device_type():
    d = godlpack.Device(2, 1)
    assert d == (2, 1) and str(d) == "cuda:1"
    assert str(godlpack.Device(99, 0)) == "device_type(99):0"
    assert str(godlpack.Device(godlpack.DLDeviceType.ROCM_HOST, 0)) == "rocm_host:0"
    assert godlpack.DLDeviceType.CUDA_MANAGED == 13


def test_tensor_constructor_matches_from_dlpack():
    a = np.arange(6, dtype=np.uint32).reshape(2, 3)
    t1 = godlpack.Tensor(a)
    t2 = godlpack.from_dlpack(a)
    for name in ("shape", "strides", "dtype", "device", "data_ptr", "readonly", "ndim", "size", "nbytes"):
        assert getattr(t1, name) == getattr(t2, name), name
    p = CtypesProducer(np.arange(4.0))
    t3 = godlpack.Tensor(p)
    assert t3.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t3
    assert p.deleter_calls == 1
    t4 = godlpack.Tensor(t1.__dlpack__(max_version=(1, 3)))
    assert t4.data_ptr == a.ctypes.data


def test_get_include_has_headers():
    inc = godlpack.get_include()
    assert os.path.isfile(os.path.join(inc, "godlpack", "dlpack.h"))


def test_all_names_exist():
    for name in godlpack.__all__:
        assert hasattr(godlpack, name), name


def test_demo_runs():
    r = subprocess.run(
        [sys.executable, "-m", "godlpack", "demo"], cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "dltensor" in r.stdout


def test_simple_buffer_requests_see_the_bytes():
    # A request without PyBUF_ND (hashlib's) got the tensor's ndim and no
    # shape: "Buffer must be single dimension" for any 2-d tensor.
    import hashlib
    import zlib

    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    for x in (a, a[0], np.array(7, dtype=np.int64)):
        t = godlpack.from_dlpack(x)
        assert hashlib.sha256(t).hexdigest() == hashlib.sha256(x.tobytes()).hexdigest()
        assert zlib.crc32(t) == zlib.crc32(x.tobytes())
    assert memoryview(godlpack.from_dlpack(a)).shape == (2, 3, 4)  # full requests keep the shape
