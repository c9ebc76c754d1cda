"""Array requirements (pyext.Require, Convert, ConvertWriteBack, NDArray)
against NumPy, PyTorch and JAX inputs, wrong inputs and threads. Run by
tests/pyext/test_arrays.py in a process of its own, with arrmod on PYTHONPATH."""
import ctypes
import gc
import os
import sys
import threading

import numpy as np
import pytest

import arrmod


def unaligned(values, dtype=np.float64):
    """values in memory one byte off an element boundary (what Dask hands
    over after a zero-copy unpickle of a buffer at an odd offset)."""
    values = np.asarray(values, dtype)
    buf = bytearray(values.nbytes + 1)
    x = np.frombuffer(buf, offset=1, dtype=dtype, count=values.size).reshape(values.shape)
    x[...] = values
    assert x.ctypes.data % np.dtype(dtype).alignment != 0
    return x


def writable_broadcast(n=3, rows=2):
    """A writable array whose rows share memory (stride 0)."""
    return np.lib.stride_tricks.as_strided(np.arange(float(n)), shape=(rows, n), strides=(0, 8))


# ---- shape, ndim, layout, dtype, device, writability -----------------------

def test_shape_with_a_wildcard_is_accepted_and_refused_naming_the_argument():
    x = np.arange(12.0).reshape(4, 3)
    assert np.from_dlpack(arrmod.rowsums(x)).tolist() == [3.0, 12.0, 21.0, 30.0]
    assert np.from_dlpack(arrmod.rowsums(np.zeros((0, 3)))).tolist() == []
    with pytest.raises(BufferError, match=r"^rowsums\(\) argument 'x': want shape \(\*, 3\), got \(4, 2\)$"):
        arrmod.rowsums(np.zeros((4, 2)))
    with pytest.raises(BufferError, match=r"want shape \(\*, 3\), got \(3,\)"):
        arrmod.rowsums(np.zeros(3))


def test_ndim_requirement():
    assert arrmod.sum_1d(np.arange(4.0)) == 6.0
    with pytest.raises(BufferError, match=r"sum_1d\(\) argument 'x': want ndim 1, got 2 \(shape \(2, 2\)\)"):
        arrmod.sum_1d(np.zeros((2, 2)))


def test_a_shape_is_never_converted():
    with pytest.raises(BufferError, match=r"matvec\(\) argument 'm': want ndim 2, got 1"):
        arrmod.matvec([1.0], [1.0])  # converted, then still refused
    with pytest.raises(BufferError, match=r"matvec\(\) argument 'v': want ndim 1, got 2"):
        arrmod.matvec([[1.0]], [[1.0]])


def test_the_nd_view_sees_strided_inputs_without_a_copy():
    x = np.arange(12.0).reshape(4, 3)
    assert arrmod.info(x) == "[4 3] [3 1] 0,1,2,3,4,5,6,7,8,9,10,11 c=true f=false flat=true"
    assert arrmod.info(x.T) == "[3 4] [1 3] 0,3,6,9,1,4,7,10,2,5,8,11 c=false f=true flat=false"
    assert arrmod.info(x[::-1, ::2]) == "[4 2] [-3 2] 9,11,6,8,3,5,0,2 c=false f=false flat=false"
    assert arrmod.info(x[:, 1]) == "[4] [3] 1,4,7,10 c=false f=false flat=false"
    assert arrmod.info(np.broadcast_to(np.arange(3.0), (2, 3))) == "[2 3] [0 1] 0,1,2,0,1,2 c=false f=false flat=false"
    assert arrmod.info(np.array(7.0)) == "[] [] 7 c=true f=true flat=true"
    assert arrmod.info(np.zeros((0, 5))) == "[0 5] [0 0]  c=true f=true flat=true"  # NumPy's strides
    # The reflection path builds the same view.
    assert arrmod.info_refl(x[::-1, ::2]) == arrmod.info(x[::-1, ::2])


def test_the_nd_view_writes_through_strides_in_place():
    base = np.arange(24.0).reshape(4, 6)
    view = base[::2, ::-3]
    want = base.copy()
    want[::2, ::-3] *= 10
    arrmod.nd_scale(view, 10.0)
    np.testing.assert_array_equal(base, want)


def test_nd_view_of_torch_and_jax_arrays():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    assert arrmod.info(t.T) == arrmod.info(t.numpy().T)
    assert arrmod.info(t[:, ::2]) == arrmod.info(t.numpy()[:, ::2])
    jnp = pytest.importorskip("jax.numpy")
    import jax

    jax.config.update("jax_enable_x64", True)
    j = jnp.arange(6.0, dtype=jnp.float64).reshape(2, 3)
    assert arrmod.info(j) == "[2 3] [3 1] 0,1,2,3,4,5 c=true f=false flat=true"
    assert np.from_dlpack(arrmod.rowsums(j)).tolist() == [3.0, 12.0]


def test_row_of_a_c_contiguous_2d_array_and_its_refusals():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert arrmod.rows_c(x) == "[0 1 2][3 4 5]"
    with pytest.raises(BufferError, match=r"rows_c\(\) argument 'x': want C-contiguous, got strides \(1, 3\) for shape \(3, 2\)"):
        arrmod.rows_c(x.T)
    with pytest.raises(BufferError, match="want dtype float32, got float64"):
        arrmod.rows_c(np.zeros((2, 2)))


def test_fortran_order():
    x = np.arange(6.0).reshape(2, 3)
    assert arrmod.flat_f(np.asfortranarray(x)) == "[0 3 1 4 2 5]"
    with pytest.raises(BufferError, match="want Fortran-contiguous, got strides \\(3, 1\\)"):
        arrmod.flat_f(x)
    assert arrmod.flat_f_conv(x) == "[0 3 1 4 2 5]"  # converted into a Fortran-ordered temporary
    assert arrmod.flat_f_conv([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]) == "[0 3 1 4 2 5]"


def test_tensor_parameters_with_dtype_ndim_layout_and_device_requirements():
    torch = pytest.importorskip("torch")
    assert arrmod.tensor_cpu(torch.zeros(2, 2)) == "float32 [2 2] cpu:0"
    assert arrmod.tensor_cpu(np.zeros((2, 5), np.float32)) == "float32 [2 5] cpu:0"
    with pytest.raises(BufferError, match=r"tensor_cpu\(\) argument 't': want dtype float32, got float64"):
        arrmod.tensor_cpu(torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(BufferError, match="want ndim 2, got 1"):
        arrmod.tensor_cpu(torch.zeros(2))
    with pytest.raises(BufferError, match=r"tensor_cuda\(\) argument 't': want a CUDA array, got an array on cpu"):
        arrmod.tensor_cuda(torch.zeros(2))
    with pytest.raises(BufferError, match="want C-contiguous, got a strided array of shape \\(3, 2\\)"):
        arrmod.tensor_c(torch.zeros(2, 3).T)
    assert arrmod.tensor_c(torch.zeros(2, 3)) == "float32 [2 3] cpu:0"
    assert arrmod.borrow_shape(torch.zeros(5, 2)) == "[5 2]"
    with pytest.raises(BufferError, match=r"borrow_shape\(\) argument 't': want shape \(\*, 2\), got \(2, 3\)"):
        arrmod.borrow_shape(torch.zeros(2, 3))


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class OnDevice:
    """float64 values in host memory labelled as a device's (2: CUDA, which
    Go must never read); counts its deleter's calls."""

    NAME = b"dltensor_versioned"

    def __init__(self, device_type, values):
        self.device = (device_type, 0)
        self.memory = (ctypes.c_double * len(values))(*values)
        self.shape = (ctypes.c_int64 * 1)(len(values))
        self.strides = (ctypes.c_int64 * 1)(2)  # every other element: not contiguous
        self.deleted = 0
        self.deleter = _DELETER(self._delete)
        self.managed = []

    def _delete(self, _):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kw):
        m = _DLManagedTensorVersioned(1, 0, None, ctypes.cast(self.deleter, ctypes.c_void_p).value, 0,
                                      ctypes.addressof(self.memory), self.device[0], 0, 1, 2, 64, 1,
                                      ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
                                      ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64)), 0)
        self.managed.append(m)
        return _capsule_new(ctypes.addressof(m), self.NAME, None)


def test_a_cuda_array_is_refused_by_cpu_parameters_even_with_conversion():
    for f in (arrmod.sum_conv, arrmod.info, arrmod.nd_sum_conv, arrmod.tensor_cpu):
        x = OnDevice(2, [1.0, 2.0])
        with pytest.raises(BufferError, match=r"want memory the CPU can read, got an array on cuda \(device type 2\)"):
            f(x)
        assert x.deleted == 1  # released exactly once
    x = OnDevice(2, [1.0, 2.0])
    assert arrmod.tensor_cuda(x) == "float64 [2] cuda:0" and x.deleted == 1
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():  # a real GPU: no silent device copy either
        g = torch.arange(6, dtype=torch.float64, device="cuda").reshape(2, 3)
        assert arrmod.tensor_cuda(g) == "float64 [2 3] cuda:0"
        for f in (arrmod.sum_conv, arrmod.info, arrmod.rowsums, arrmod.tensor_cpu):
            with pytest.raises(BufferError, match="want memory the CPU can read, got an array on cuda"):
                f(g)
        with pytest.raises(BufferError, match="want memory the CPU can read"):
            arrmod.scale_wb(g, 2.0)
        assert g.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_written_arguments_must_be_writable_and_not_jax():
    x = np.arange(6.0).reshape(2, 3)
    x.setflags(write=False)
    with pytest.raises(BufferError, match=r"nd_scale\(\) argument 'x' is read-only, and nd_scale may write to it"):
        arrmod.nd_scale(x, 2.0)
    with pytest.raises(BufferError, match="read-only"):
        arrmod.scale_wb(x[:, 0], 2.0)  # would need a conversion: still refused
    jnp = pytest.importorskip("jax.numpy")
    for f in (arrmod.nd_scale, arrmod.scale_wb, arrmod.nd_scale_wb):
        with pytest.raises(BufferError, match="JAX.*immutable"):
            f(jnp.ones((2, 3)), 2.0)


def test_a_definition_with_impossible_requirements_fails_the_import():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("arrmod_bad", arrmod.__file__)  # PyInit_arrmod_bad, same library
    spec = importlib.util.spec_from_file_location("arrmod_bad", arrmod.__file__, loader=loader)
    with pytest.raises(ImportError, match=r"arrmod_bad.scale: pyext.Require\(\"a\"\): the parameter is not an array"):
        importlib.util.module_from_spec(spec)


# ---- conversion ------------------------------------------------------------

def test_without_conversion_non_conforming_inputs_are_refused():
    with pytest.raises(BufferError, match=r"sum\(\) argument 1: data at 0x[0-9a-f]+ is not aligned for float64"):
        arrmod.sum(unaligned([1.0, 2.0]))
    with pytest.raises(BufferError, match=r"sum\(\) argument 1: not C-contiguous \(strides \[0\]"):
        arrmod.sum(np.broadcast_to(np.float64(2.0), (4,)))
    with pytest.raises(BufferError, match=r"sum_1d\(\) argument 'x': want C-contiguous, got strides \(2,\) for shape "
                                          r"\(3,\); pass a conforming copy, or allow a conversion in Go \(pyext.Convert\)"):
        arrmod.sum_1d(np.arange(6.0)[::2])
    with pytest.raises(BufferError, match="want dtype float64, got float32"):
        arrmod.sum(np.zeros(2, np.float32))
    with pytest.raises(BufferError, match=r"sum_1d\(\) argument 'x': want dtype float64, got >f8; pass a conforming copy"):
        arrmod.sum_1d(np.zeros(2, ">f8"))
    with pytest.raises(BufferError, match=r"info\(\) argument 1: want dtype float64, got datetime64\[s\]"):
        arrmod.info(np.zeros(2, "M8[s]"))
    with pytest.raises(TypeError):
        arrmod.sum([1.0, 2.0])
    with pytest.raises(TypeError):
        arrmod.sum_1d([1.0, 2.0])


@pytest.mark.parametrize("make", [
    lambda: np.arange(5.0),                                         # conforming: zero-copy
    lambda: unaligned(np.arange(5.0)),                              # unaligned
    lambda: np.arange(10.0)[::2] // 2,                              # strided result, 0..4
    lambda: np.arange(5, dtype=np.float32),                         # dtype
    lambda: np.arange(5, dtype=np.int32),                           # int to float
    lambda: np.arange(5.0).astype(">f8"),                           # byte order
    lambda: [0, 1, 2, 3, 4],                                        # a list
    lambda: (0.0, 1.0, 2.0, 3.0, 4.0),                              # a tuple
])
def test_conversion_accepts_what_numpy_would_convert(make):
    x = make()
    before = sys.getrefcount(x)
    assert arrmod.sum_conv(x) == 10.0
    assert sys.getrefcount(x) == before


def test_conversion_of_scalars_broadcasts_and_peers():
    assert arrmod.sum_conv(3.5) == 3.5
    assert arrmod.sum_conv(np.broadcast_to(np.float64(2.0), (5,))) == 10.0
    assert arrmod.nd_sum_conv(np.arange(6.0).reshape(2, 3).T) == 15.0
    assert arrmod.info_conv(np.arange(6.0).reshape(2, 3).T) == "[3 2] [2 1] 0,3,1,4,2,5 c=true f=false flat=true"
    torch = pytest.importorskip("torch")
    assert arrmod.sum_conv(torch.arange(6, dtype=torch.float64).reshape(2, 3).T[0]) == 3.0  # strided
    assert arrmod.sum_conv(torch.ones(4)) == 4.0  # float32 to float64
    assert arrmod.isum_conv(torch.arange(4, dtype=torch.int32)) == 6
    jnp = pytest.importorskip("jax.numpy")
    assert arrmod.sum_conv(jnp.ones(3, dtype=jnp.float32)) == 3.0
    assert np.from_dlpack(arrmod.matvec(jnp.eye(2, dtype=jnp.float32), [2, 3])).tolist() == [2.0, 3.0]


def test_conversion_refuses_unsafe_casts_and_non_arrays():
    with pytest.raises(BufferError, match=r"isum_conv\(\) argument 'x': want dtype int64, got float64, and converting "
                                          r"the numpy.ndarray to int64 failed: Cannot cast"):
        arrmod.isum_conv(np.ones(2))
    with pytest.raises(BufferError, match="isum_conv.*not an array, and converting the list to int64 failed"):
        arrmod.isum_conv([1.5])
    with pytest.raises(BufferError, match="converting the str to float64 failed"):
        arrmod.sum_conv("abc")


def test_write_back_of_unaligned_strided_and_fortran_arguments():
    y = np.arange(8.0)
    arrmod.scale_wb(y[::2], 10.0)
    assert y.tolist() == [0.0, 1.0, 20.0, 3.0, 40.0, 5.0, 60.0, 7.0]
    u = unaligned([1.0, 2.0, 3.0])
    arrmod.scale_wb(u, 2.0)
    assert u.tolist() == [2.0, 4.0, 6.0]
    m = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    arrmod.nd_scale_wb(m, 3.0)
    assert m.tolist() == [[0.0, 3.0, 6.0], [9.0, 12.0, 15.0]]
    c = np.arange(6.0).reshape(2, 3)
    arrmod.scale_wb(c, 2.0)  # conforming: in place, no temporary
    assert c.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    arrmod.nd_scale_wb(t.T, -1.0)
    assert t.tolist() == [[-0.0, -1.0, -2.0], [-3.0, -4.0, -5.0]]


def test_write_back_happens_also_when_the_function_panics():
    y = np.arange(6.0)
    with pytest.raises(RuntimeError, match="after scaling"):
        arrmod.scale_wb_panic(y[::2], 2.0)
    assert y.tolist() == [0.0, 1.0, 4.0, 3.0, 8.0, 5.0]


def test_write_back_refusals():
    with pytest.raises(BufferError, match=r"scale_wb\(\) argument 'x': want dtype float64, got float32, and a conversion "
                                          r"of dtype cannot be written back"):
        arrmod.scale_wb(np.ones(3, np.float32), 2.0)
    b = writable_broadcast()
    with pytest.raises(BufferError, match="broadcast \\(stride 0 in dimension 0\\).*cannot go back"):
        arrmod.nd_scale_wb(b, 2.0)
    assert b.tolist() == [[0.0, 1.0, 2.0]] * 2
    with pytest.raises(BufferError, match="read-only"):
        arrmod.nd_scale_wb(np.broadcast_to(np.arange(3.0), (2, 3)), 2.0)
    with pytest.raises(BufferError, match="a list is no array"):
        arrmod.scale_wb([1.0, 2.0], 2.0)
    # Without any conversion option, a written non-conforming argument is refused.
    with pytest.raises(BufferError, match="not C-contiguous"):
        arrmod.scale(np.arange(4.0)[::2], 2.0)


# ---- Dask-shaped blocks ----------------------------------------------------

def test_dask_like_blocks_work_with_conversion_and_are_refused_without():
    blocks = [unaligned(np.arange(100.0)), np.broadcast_to(np.float64(1.0), (100,)),
              np.broadcast_to(np.arange(10.0), (10, 10))]
    for b in blocks:
        assert arrmod.sum_conv(b) == float(np.sum(b))
        with pytest.raises(BufferError, match="not aligned|not C-contiguous"):
            arrmod.sum(b)


def test_dask_map_blocks_with_the_synchronous_scheduler():
    da = pytest.importorskip("dask.array")
    total = np.arange(40.0).sum()
    x = da.from_array(np.arange(40.0).reshape(8, 5), chunks=(4, 5))
    # Blocks moved one byte off their alignment (as a zero-copy unpickle at an odd offset does).
    odd = x.map_blocks(unaligned, dtype=float)
    sums = odd.map_blocks(lambda b: np.array([[arrmod.sum_conv(b)]]), chunks=(1, 1), dtype=float)
    assert sums.compute(scheduler="synchronous").sum() == total
    with pytest.raises(BufferError, match="not aligned for float64"):
        odd.map_blocks(lambda b: np.array([[arrmod.sum(b)]]), chunks=(1, 1), dtype=float).compute(scheduler="synchronous")
    # Broadcast blocks: stride 0.
    bc = da.broadcast_to(da.arange(5.0, chunks=5), (8, 5), chunks=(4, 5))
    rows = bc.map_blocks(lambda b: np.from_dlpack(arrmod.rowsums(np.asarray(b)[:, :3])), chunks=(4,), drop_axis=1,
                         dtype=float)
    assert rows.compute(scheduler="synchronous").tolist() == [3.0] * 8  # an NDArray takes stride 0 as it is
    conv = bc.map_blocks(lambda b: np.array([[arrmod.sum_conv(b)]]), chunks=(1, 1), dtype=float)
    assert conv.compute(scheduler="synchronous").sum() == 8 * 10.0
    with pytest.raises(BufferError, match="not C-contiguous"):
        bc.map_blocks(lambda b: np.array([[arrmod.sum(b)]]), chunks=(1, 1), dtype=float).compute(scheduler="synchronous")


# ---- threads and leaks -----------------------------------------------------

def test_eight_threads_convert_and_write_back_without_the_gil():
    errors = []
    ys = [np.arange(2000.0) for _ in range(8)]

    def work(k):
        try:
            for _ in range(200):
                assert arrmod.sum_conv_nogil(unaligned(np.ones(1000))) == 1000.0
                assert arrmod.sum_conv_nogil(np.ones(1000, np.float32)) == 1000.0
            arrmod.scale_wb_nogil(ys[k][::2], 2.0)
        except Exception as e:  # noqa: BLE001  reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for y in ys:
        want = np.arange(2000.0)
        want[::2] *= 2
        np.testing.assert_array_equal(y, want)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
def test_ten_thousand_conversions_free_their_temporaries():
    big = unaligned(np.ones(100_000))  # 800 kB copied per call
    wb = np.ones(200_000)[::2]
    f32 = np.ones(100_000, np.float32)
    for _ in range(200):
        arrmod.sum_conv(big)
        arrmod.sum_conv(f32)
        arrmod.scale_wb(wb, 1.0)
    gc.collect()
    before = _rss()
    for _ in range(10_000):
        arrmod.sum_conv(big)
        arrmod.sum_conv(f32)
        arrmod.scale_wb(wb, 1.0)
        try:
            arrmod.isum_conv(big)
        except BufferError:
            pass
    gc.collect()
    grown = _rss() - before
    assert grown < 16 << 20, f"RSS grew {grown / 2**20:.1f} MiB over 10,000 rounds (a leak would be GiBs)"
    assert sys.getrefcount(big) == sys.getrefcount(f32)


# ---- buffer-protocol arguments (bytes, bytearray, memoryview, array.array, mmap) -----

import array  # noqa: E402
import mmap  # noqa: E402
import time  # noqa: E402


def test_a_read_only_byte_slice_takes_every_bytes_like_object_zero_copy():
    data = bytes(range(1, 11))
    want = sum(data)
    with mmap.mmap(-1, 10) as mm:
        mm[:] = data
        for obj in (data, bytearray(data), memoryview(data), array.array("B", data), mm,
                    memoryview(bytearray(data)).cast("c"), memoryview(data)[2:5], np.frombuffer(data, np.uint8)):
            want_sum = sum(bytes(obj)) if not isinstance(obj, mmap.mmap) else want
            assert arrmod.bytesum(obj) == want_sum, type(obj)
            assert arrmod.bytesum_nogil(obj) == want_sum, type(obj)
    assert arrmod.bytesum(b"") == 0 and arrmod.bytesum(bytearray()) == 0


def test_typed_slices_take_buffers_of_their_format_and_n_d_buffers_flattened():
    assert arrmod.sum(array.array("d", [1.0, 2.5])) == 3.5
    assert arrmod.sum(memoryview(array.array("d", [1.0, 2.0, 3.0, 4.0])).cast("B").cast("d", (2, 2))) == 10.0
    assert arrmod.isum(array.array("q", [1, 2, 3])) == 6
    assert arrmod.isum(memoryview(np.arange(4, dtype=np.int64))) == 6
    # A buffer of the parameter's dtype under another name (native long, '=q').
    assert arrmod.isum(memoryview(array.array("l", [5, 6]))) == 11
    assert arrmod.isum(memoryview(bytes(16)).cast("q")) == 0
    # NDArray sees the buffer's shape and strides.
    assert arrmod.info(memoryview(np.arange(6.0).reshape(2, 3)[:, ::2])).startswith("[2 2] [3 2] 0,2,3,5")


def test_a_written_slice_writes_through_a_writable_buffer_and_refuses_a_read_only_one():
    b = bytearray(4)
    arrmod.fill(b, 7)
    assert b == bytearray([7] * 4)
    a = array.array("d", [1.0, 2.0])
    arrmod.scale(a, 3.0)
    assert a.tolist() == [3.0, 6.0]
    with pytest.raises(BufferError, match=r"^fill\(\) argument 'b' is read-only, and fill may write to it$"):
        arrmod.fill(b"abcd", 1)
    with pytest.raises(BufferError, match=r"^fill\(\) argument 'b' is read-only"):
        arrmod.fill(memoryview(bytearray(4)).toreadonly(), 1)


@pytest.mark.parametrize("obj,match", [
    (array.array("i", [1, 2]), r"^sum\(\) argument 1: want dtype float64, got int32; pass a conforming copy"),
    (array.array("f", [1.0]), r"^sum\(\) argument 1: want dtype float64, got float32"),
    (b"12345678", r"^sum\(\) argument 1: want dtype float64, got uint8"),
    (memoryview(np.zeros(2, ">f8" if sys.byteorder == "little" else "<f8")),
     r"^sum\(\) argument 1: want dtype float64, got buffer format '[<>]d'"),
    (memoryview(array.array("d", [1.0, 2.0, 3.0]))[::2], r"^sum\(\) argument 1: want C-contiguous, got strides \(2,\)"),
    (memoryview(bytearray(17))[1:].cast("d"), r"^sum\(\) argument 1: data at 0x[0-9a-f]+ is not aligned for float64"),
])
def test_a_buffer_that_does_not_conform_is_a_buffer_error_naming_the_argument(obj, match):
    with pytest.raises(BufferError, match=match):
        arrmod.sum(obj)


def test_conversion_takes_buffers_as_numpy_reads_them():
    assert arrmod.sum_conv(b"\x01\x02\x03") == 6.0  # uint8 values, not a bytes scalar
    assert arrmod.sum_conv(array.array("i", [1, 2])) == 3.0
    assert arrmod.sum_conv(memoryview(array.array("d", [1.0, 2.0, 4.0]))[::2]) == 5.0
    a = array.array("d", [1.0, 2.0, 3.0, 4.0])
    arrmod.scale_wb(memoryview(a)[::2], 10.0)  # written back through the strided view
    assert a.tolist() == [10.0, 2.0, 30.0, 4.0]


def test_operators_and_methods_take_buffers_and_others_get_not_implemented():
    class Arr(array.array):
        def __radd__(self, other):
            return "radd"

        def __rmul__(self, other):
            return "rmul"

    h = arrmod.Huge(1.0)
    assert h + array.array("d", [1.0, 2.0]) == 4.0
    assert h + Arr("d", [1.0]) == 2.0
    assert h.dot(memoryview(array.array("d", [2.0]))) == 2.0
    assert array.array("d", [5.0]) - h == 4.0
    assert h @ memoryview(np.zeros((2, 3))) == 6.0
    # The wrong format: NotImplemented, so the other operand answers, or TypeError.
    assert h.__add__(array.array("i", [1])) is NotImplemented
    assert h + Arr("i", [1]) == "radd"
    assert h.__add__(np.zeros(2, np.float32)) is NotImplemented
    assert h.__add__(memoryview(array.array("d", [1.0, 2.0, 3.0]))[::2]) is NotImplemented
    for other in (array.array("i", [1]), b"\0" * 8):
        with pytest.raises(TypeError, match="unsupported operand"):
            h + other
    g = arrmod.Huge(2.0)
    g *= Arr("d", [3.0])
    assert isinstance(g, arrmod.Huge) and g.v == 6.0
    g = arrmod.Huge(2.0)
    g *= Arr("i", [3])  # __imul__ and __mul__ refuse: Arr's __rmul__ answers
    assert g == "rmul"
    with pytest.raises(BufferError, match=r"^Huge.dot\(\) argument 1: want dtype float64, got int32"):
        h.dot(array.array("i", [1]))


def _exported(obj):
    """Whether obj has a buffer exported (a resize is refused meanwhile)."""
    try:
        obj.append(0)
    except BufferError:
        return True
    obj.pop()
    return False


def test_the_buffer_is_held_for_the_call_and_released_exactly_once_on_every_path():
    b = bytearray(b"\x01\x02")
    a = array.array("d", [1.0])
    m = memoryview(b)  # one export of the test's own: a second release would drop it
    ma = memoryview(a)
    assert arrmod.bytesum(b) == 3 and arrmod.sum(a) == 1.0
    with pytest.raises(TypeError):
        arrmod.scale(a, "x")  # the second argument fails after the first is held
    with pytest.raises(BufferError):
        arrmod.fill(memoryview(b).toreadonly(), 1)
    with pytest.raises(RuntimeError, match="bytes_panic"):
        arrmod.bytes_panic(b)
    with pytest.raises(BufferError):
        arrmod.isum(a)  # refused after the buffer was taken
    assert arrmod.Huge(1.0).__add__(array.array("i", [1])) is NotImplemented
    assert _exported(b) and _exported(a)  # the test's views are still counted
    m.release()
    ma.release()
    assert not _exported(b) and not _exported(a)  # and nothing else holds them


def test_a_view_cannot_be_resized_or_released_while_go_reads_it():
    b = bytearray(range(100))
    view = memoryview(b)
    seen = []

    def meddle():
        time.sleep(0.05)
        for f in (lambda: b.extend(b"x" * 1000), lambda: b.clear(), view.release):
            try:
                f()
                seen.append("done")
            except BufferError:
                seen.append("refused")

    t = threading.Thread(target=meddle)
    t.start()
    assert arrmod.hold(view, 300) == sum(range(100))
    t.join(timeout=10)
    assert seen == ["refused"] * 3
    view.release()
    b.clear()  # released: resizable again


def test_threads_share_buffers_without_the_gil():
    data = [bytes([k]) * 1000 for k in range(8)]
    arrs = [array.array("d", [float(k)] * 500) for k in range(8)]
    errors = []

    def work(k):
        try:
            for _ in range(300):
                assert arrmod.bytesum_nogil(data[k]) == 1000 * k
                assert arrmod.sum_nogil(arrs[k]) == 500.0 * k
                with pytest.raises(BufferError, match="want C-contiguous"):
                    arrmod.bytesum_nogil(memoryview(data[k])[::-1])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    for a in arrs:
        assert not _exported(a)


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
def test_a_hundred_thousand_buffer_calls_leak_nothing():
    b = bytes(1024)
    a = array.array("d", [1.0] * 128)
    for _ in range(1000):
        arrmod.bytesum(b)
    gc.collect()
    before, refs = _rss(), sys.getrefcount(b)
    for _ in range(100_000):
        arrmod.bytesum(b)
        arrmod.sum(a)
        try:
            arrmod.isum(a)
        except BufferError:
            pass
    gc.collect()
    assert _rss() - before < 8 << 20
    assert sys.getrefcount(b) == refs and not _exported(a)


@pytest.mark.parametrize("call", [
    lambda: arrmod.sum(np.zeros(2, np.float32)),  # a typed slice, through DLPack (ext.c)
    lambda: arrmod.sum_1d(np.zeros(2, np.float32)),  # with requirements (ext_arrays.c)
    lambda: arrmod.sum(array.array("f", [0.0])),  # a buffer
    lambda: arrmod.Huge(1.0).dot(np.zeros(2, np.float32)),  # a method
])
def test_a_dtype_refusal_is_worded_alike_on_every_path(call):
    with pytest.raises(BufferError, match=r"^(Huge\.dot|sum|sum_1d)\(\) argument (1|'x'): want dtype float64, got float32(;|$)"):
        call()


def test_an_unusable_buffer_is_refused_naming_the_argument():
    m = memoryview(b"abc")
    m.release()
    with pytest.raises(ValueError, match=r"^bytesum\(\) argument 1: operation forbidden on released memoryview"):
        arrmod.bytesum(m)
    mm = mmap.mmap(-1, 4)
    mm.close()
    with pytest.raises(ValueError, match=r"^bytesum_refl\(\) argument 1: mmap closed or invalid"):
        arrmod.bytesum_refl(mm)


def test_reflection_takes_buffers_too():
    assert arrmod.bytesum_refl(b"\x01\x02") == 3 and arrmod.bytesum_refl(array.array("B", [4])) == 4


def test_a_callable_that_meddles_with_a_held_buffer_is_refused_and_one_that_reenters_works():
    b = bytearray(b"\x01\x02")

    def resize():
        b.extend(b"\x03")
        return 0

    with pytest.raises(BufferError, match="re-sized"):
        arrmod.sum_after(b, resize)  # the buffer is held while Go runs the callable
    assert not _exported(b)

    def reenter():
        return arrmod.sum_after(b, lambda: arrmod.bytesum(b))

    assert arrmod.sum_after(b, reenter) == 3 + (3 + 3)
    b[0] = 5  # writes in place are the caller's business: Go sees them
    assert arrmod.sum_after(b, lambda: 0) == 7
    assert not _exported(b)
