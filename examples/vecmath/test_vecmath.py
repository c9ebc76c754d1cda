"""vecmath against NumPy, PyTorch and JAX: zero-copy in place, results
shared with NumPy, refusals, panics, threads. Run with pytest after
`pip install .` (or with vecmath on PYTHONPATH)."""
import ctypes
import gc
import os
import sys
import threading

import numpy as np
import pytest

import vecmath


def test_scale_works_in_place_on_numpy_memory():
    x = np.arange(6, dtype=np.float32)
    before = sys.getrefcount(x)
    assert vecmath.scale(x, 2.5) is None
    np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32) * 2.5)
    assert sys.getrefcount(x) == before  # the capsule and its deleter are done with x


def test_scale_on_a_view_writes_through_to_the_base():
    base = np.zeros((4, 4), dtype=np.float32) + 1
    vecmath.scale(base[1], 3.0)  # a contiguous row view
    assert base[1].tolist() == [3.0] * 4 and base[0].tolist() == [1.0] * 4


def test_add_returns_go_memory_shared_with_numpy():
    r = vecmath.add(np.ones(5), np.arange(5.0))
    a = np.from_dlpack(r)
    b = np.asarray(r)  # the buffer protocol, also zero-copy
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert np.shares_memory(a, b)
    a[0] = 42.0
    assert b[0] == 42.0 and r.tolist()[0] == 42.0
    del r, b
    gc.collect()
    assert a[0] == 42.0  # the Go memory lives as long as a does


def test_norm_returns_a_float():
    assert vecmath.norm(np.array([3.0, 4.0])) == 5.0
    assert vecmath.norm(np.zeros(0)) == 0.0


def test_clip_a_plain_go_function_defined_through_reflection():
    x = np.array([-2.0, 0.5, 3.0, 1.0])
    assert vecmath.clip(x, 0.0, 1.0) == 2
    assert x.tolist() == [0.0, 0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match="lo > hi"):
        vecmath.clip(x, 1.0, 0.0)
    with pytest.raises(BufferError, match="want dtype float64, got float32"):
        vecmath.clip(np.zeros(2, np.float32), 0.0, 1.0)


def test_read_only_arrays_go_only_where_the_function_allows():
    x = np.arange(4.0)
    x.setflags(write=False)
    assert vecmath.norm(x) == pytest.approx(np.linalg.norm(x))
    y = np.arange(4, dtype=np.float32)
    y.setflags(write=False)
    with pytest.raises(BufferError, match="read-only"):
        vecmath.scale(y, 2.0)
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "arg, match",
    [
        (np.arange(3.0), "want dtype float32, got float64"),
        (np.arange(8, dtype=np.float32)[::2], "not C-contiguous"),
        (np.zeros((3, 3), dtype=np.float32).T, "not C-contiguous"),
    ],
)
def test_refusals_are_buffer_errors_and_leave_the_array_alone(arg, match):
    before = sys.getrefcount(arg)
    with pytest.raises(BufferError, match=match):
        vecmath.scale(arg, 2.0)
    assert sys.getrefcount(arg) == before


def test_argument_errors():
    with pytest.raises(TypeError, match=r"^scale\(\) missing required argument 'a' \(pos 2\)"):
        vecmath.scale(np.zeros(2, dtype=np.float32))
    with pytest.raises(TypeError):
        vecmath.scale([1.0, 2.0], 2.0)  # a list is no DLPack object
    with pytest.raises(TypeError):
        vecmath.scale(np.zeros(2, dtype=np.float32), "x")
    with pytest.raises(ValueError, match="differ in length"):
        vecmath.add(np.zeros(2), np.zeros(3))


def test_go_errors_and_panics_become_python_exceptions():
    with pytest.raises(ValueError, match="failed, as asked"):
        vecmath.fail("error")
    with pytest.raises(BufferError, match="refused, as asked"):
        vecmath.fail("buffer")
    with pytest.raises(RuntimeError, match="Go panic in fail.*nil map") as e:
        vecmath.fail("panic")
    # One line of message; the goroutine's stack is a note under the traceback.
    assert "\n" not in str(e.value)
    assert any("goroutine" in n for n in getattr(e.value, "__notes__", []))
    assert vecmath.norm(np.array([1.0])) == 1.0  # the interpreter lives on


def test_keyword_arguments_are_refused_by_the_functions_name():
    # echo's parameters have no names (the builder API, without pyext.Args).
    with pytest.raises(TypeError, match=r"^echo\(\) takes no keyword arguments"):
        vecmath.echo(x=np.array([1.0]))
    # A declared function's parameters are named as in Go: keywords work.
    assert vecmath.norm(x=np.array([3.0, 4.0])) == 5.0
    with pytest.raises(TypeError, match=r"^norm\(\) got an unexpected keyword argument 'y'"):
        vecmath.norm(y=np.array([1.0]))


def test_threads_scale_disjoint_arrays_concurrently():
    arrays = [np.ones(10_000, dtype=np.float32) for _ in range(8)]
    threads = [threading.Thread(target=lambda a=a: [vecmath.scale(a, 2.0) for _ in range(50)]) for a in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a in arrays:
        assert a[0] == 2.0**50 and a[-1] == 2.0**50


def test_its_go_runtime_is_listed_and_gets_its_preemption_signal():
    mine = [r for r in vecmath.go_runtimes() if r[1]]
    assert len(mine) == 1, vecmath.go_runtimes()
    path, _, version, chained = mine[0]
    assert "vecmath" in path and chained and version.startswith("go"), mine


def test_torch_tensors_in_place_and_back():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float32)
    vecmath.scale(t, 2.0)
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0]
    r = torch.from_dlpack(vecmath.add(torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)))
    assert r.tolist() == [2.0, 2.0, 2.0]


def test_jax_arrays_are_read():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.array([3.0, 4.0], dtype=jnp.float64) if jnp.array(1.0).dtype == jnp.float64 else None
    x = jnp.array([3.0, 4.0], dtype=jnp.float32)
    with pytest.raises(BufferError, match="want dtype float64, got float32"):
        vecmath.norm(x)  # norm takes float64; JAX defaults to float32
    r = vecmath.add(np.ones(2), np.ones(2))
    import jax

    assert jax.numpy.from_dlpack(r).tolist() == [2.0, 2.0]


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")),
                    reason="under a sanitizer the allocator's quarantine makes RSS meaningless")
def test_many_distinct_lengths_do_not_grow_memory():
    """Regression: each new array length made a new Go array type, cached for
    the life of the process (284 bytes and 3.5 us per length)."""
    x = np.ones(102_001)
    for n in range(1, 2_001):  # warm up allocators
        vecmath.norm(x[:n])
    before = _rss()
    for n in range(2_001, 102_001):
        vecmath.norm(x[:n])
    grown = _rss() - before
    # Before the fix: about 27 MiB here. Allocator noise stays well below 8.
    assert grown < 8 << 20, f"RSS grew {grown / 2**20:.1f} MiB over 100,000 distinct lengths"


def test_a_result_aliasing_an_argument_is_refused():
    """Returning an argument's memory would hand Python memory freed after the call."""
    with pytest.raises(ValueError, match="aliases an argument"):
        vecmath.echo(np.arange(3.0))


class DLPackOnly:
    """x seen only through __dlpack__: the path every argument but an exact
    NumPy array takes, against which NumPy's fast path is checked."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


class Sub(np.ndarray):
    pass


def _arrays():
    dtypes = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.intc, np.uintc, np.int64, np.longlong,
              np.uint64, np.ulonglong, np.float16, np.float32, np.float64, np.longdouble, np.complex64,
              np.complex128, ">f8", ">i8", "<f8", "M8[s]", "V8", [("a", "<f4"), ("b", "<f4")]]
    for dt in dtypes:
        base = np.zeros(12, dt) if np.dtype(dt).kind in "MV" else np.arange(12).astype(dt)
        ro = base.copy()
        ro.setflags(write=False)
        yield from (base, base.reshape(3, 4), base.reshape(3, 4).T, base[::2], base[:0], base.reshape(3, 4)[:, :1],
                    base.reshape(3, 4)[:1], base[:1].reshape(()), ro, base.view(Sub))
        if base.itemsize > 1:  # one byte off: unaligned, still contiguous
            yield np.concatenate([np.zeros(1, np.uint8), base.view(np.uint8).ravel()])[1:].view(base.dtype)


def _outcome(f, x):
    try:
        return "returned", f(x)
    except Exception as e:  # noqa: BLE001  the exception is the outcome compared
        return type(e), str(e)


@pytest.mark.parametrize("name", ["norm", "isum", "scale"])
def test_numpy_fast_path_accepts_and_refuses_as_dlpack_does(name):
    """NumPy arrays are read from their fields, not through __dlpack__: every
    dtype, layout and flag gets the same result or the same exception."""
    f = (lambda x: vecmath.scale(x, 1.0)) if name == "scale" else getattr(vecmath, name)
    for x in _arrays():
        before = sys.getrefcount(x)
        fast = _outcome(f, x)
        assert sys.getrefcount(x) == before, (x.dtype, x.shape)
        slow = _outcome(f, DLPackOnly(x))
        assert fast == slow, (name, x.dtype, x.shape, x.strides, x.flags.writeable)


def test_unaligned_arrays_are_refused():
    """Go's slices assume aligned elements; NumPy exports unaligned arrays."""
    x = np.concatenate([np.zeros(1, np.uint8), np.arange(4.0).view(np.uint8)])[1:].view(np.float64)
    assert not x.flags.aligned and x.flags.c_contiguous
    for arg in (x, DLPackOnly(x)):
        with pytest.raises(BufferError, match="not aligned"):
            vecmath.norm(arg)
    assert vecmath.norm(x.copy()) == pytest.approx(np.linalg.norm(np.arange(4.0)))


def test_a_consumer_tensor_parameter_is_borrowed_for_the_call():
    """mean takes a *consumer.Tensor: typed views chosen at run time, from any
    DLPack producer; refusals keep their classes."""
    assert vecmath.mean(np.arange(4.0)) == 1.5
    assert vecmath.mean(np.arange(6, dtype=np.float32).reshape(2, 3)) == 2.5
    assert vecmath.mean(DLPackOnly(np.arange(4.0))) == 1.5
    ro = np.arange(4.0)
    ro.setflags(write=False)
    assert vecmath.mean(ro) == 1.5  # ReadOnlyArgs
    with pytest.raises(TypeError, match="want float32 or float64"):
        vecmath.mean(np.arange(4))
    with pytest.raises(BufferError, match="not contiguous"):
        vecmath.mean(np.arange(8.0)[::2])
    x = np.arange(4.0)
    before = sys.getrefcount(x)
    for _ in range(1000):
        vecmath.mean(x)
    assert sys.getrefcount(x) == before  # the trampoline released every capsule


def test_both_numpy_int64_types_are_int64():
    assert vecmath.isum(np.arange(4, dtype=np.int64)) == 6
    assert vecmath.isum(np.arange(4, dtype=np.longlong)) == 6
    with pytest.raises(BufferError, match="want dtype int64, got int32"):
        vecmath.isum(np.arange(4, dtype=np.int32))


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class OnDevice:
    """A DLPack producer made with ctypes: float32 values in host memory,
    labelled as memory of any device type (2 is CUDA: Go must never read it,
    13 CUDAManaged: the host may). Counts its deleter's calls."""

    NAME = b"dltensor_versioned"  # PyCapsule_New keeps this pointer: alive as long as the class

    def __init__(self, device_type, values, device_id=0):
        self.device = (device_type, device_id)
        self.memory = (ctypes.c_float * len(values))(*values)
        self.shape = (ctypes.c_int64 * 1)(len(values))
        self.deleted = 0
        self.deleter = _DELETER(self._delete)  # the callback lives as long as the producer
        self.managed = []  # every struct handed out, alive while a consumer may hold it

    def _delete(self, _):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kw):
        m = _DLManagedTensorVersioned(1, 0, None, ctypes.cast(self.deleter, ctypes.c_void_p).value, 0,
                                      ctypes.addressof(self.memory), self.device[0], self.device[1], 1,
                                      2, 32, 1, self.shape, None, 0)  # float32, compact
        self.managed.append(m)
        return _capsule_new(ctypes.addressof(m), self.NAME, None)

    def values(self):
        return list(self.memory)


def test_a_tensor_parameter_takes_an_array_on_a_gpu():
    """godlpack.Tensor parameters take any device: Go sees it and the data
    pointer, never reads the memory; the deleter runs once, after the call."""
    x = OnDevice(2, [1.0, 2.0, 3.0])
    assert vecmath.describe(x) == "float32 [3]"
    assert x.deleted == 1
    assert vecmath.where(x) == f"cuda:0 {ctypes.addressof(x.memory):#x}"
    assert x.deleted == 2
    # Device memory is ready on the legacy default stream (godlpack asks for
    # stream=None): the host does not wait for it. Where a CUDA driver is
    # loaded, a host sync on an ordinal no machine has would raise here.
    far = OnDevice(2, [1.0], device_id=99)
    assert vecmath.where(far) == f"cuda:99 {ctypes.addressof(far.memory):#x}" and far.deleted == 1


def test_a_consumer_tensor_on_a_gpu_refuses_typed_views():
    """A *consumer.Tensor parameter takes the GPU array; its typed view refuses
    memory the CPU cannot read, and that error is a BufferError."""
    x = OnDevice(2, [1.0, 2.0, 3.0])
    with pytest.raises(BufferError, match="cuda:0 memory is not CPU-accessible"):
        vecmath.mean(x)
    assert x.deleted == 1


def test_typed_slices_refuse_arrays_on_a_gpu():
    """A typed slice is CPU memory: a CUDA array is refused before its dtype is
    checked, naming the argument and the device; nothing is written."""
    x = OnDevice(2, [1.0, 2.0, 3.0])
    with pytest.raises(BufferError, match=r"^scale\(\) argument 'x' is on device type 2; .*CPU-accessible"):
        vecmath.scale(x, 2.0)
    assert x.deleted == 1 and x.values() == [1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match=r"^norm\(\) argument 'x' is on device type 2; .*CPU-accessible"):
        vecmath.norm(x)  # norm takes float64: the device is refused first
    assert x.deleted == 2
    raw = OnDevice(2, [1.0])  # a raw capsule, as well as a producer
    with pytest.raises(BufferError, match="argument 'x' is on device type 2"):
        vecmath.norm(raw.__dlpack__())
    assert raw.deleted == 1


def test_managed_memory_is_cpu_accessible():
    """CUDAManaged memory is host-readable once the device is synchronised (no
    driver in this process: no GPU work can be in flight): typed slices and
    typed views read and write it."""
    x = OnDevice(13, [1.0, 2.0, 3.0])
    vecmath.scale(x, 2.0)
    assert x.values() == [2.0, 4.0, 6.0] and x.deleted == 1
    assert vecmath.mean(x) == 4.0 and x.deleted == 2
    assert vecmath.where(x) == f"cuda_managed:0 {ctypes.addressof(x.memory):#x}"
    assert x.deleted == 3


@pytest.mark.skipif(not os.environ.get("GODLPACK_LIBCUDA"),
                    reason="needs the stand-in CUDA driver: tests/pyext/test_examples.py runs this with it")
def test_the_host_waits_only_for_memory_it_reads():
    """With a driver loaded (tests/runtime/fakecuda, which logs its calls): a managed
    argument makes the host synchronise the legacy default stream before Go
    reads it; CUDA device memory never blocks the host (nor does a CUDA
    ordinal the driver lacks fail a sync)."""
    fake = ctypes.CDLL(os.environ["GODLPACK_LIBCUDA"])
    fake.fakecuda_count.restype, fake.fakecuda_count.argtypes = ctypes.c_long, [ctypes.c_char_p]
    fake.fakecuda_log.restype, fake.fakecuda_violations.restype = ctypes.c_char_p, ctypes.c_long
    fake.fakecuda_reset()
    x = OnDevice(2, [1.0, 2.0, 3.0])
    assert vecmath.describe(x) == "float32 [3]"
    with pytest.raises(BufferError, match="not CPU-accessible"):
        vecmath.mean(x)
    with pytest.raises(BufferError, match="on device type 2"):
        vecmath.scale(x, 2.0)
    assert fake.fakecuda_count(b"cuStreamSynchronize") == 0, fake.fakecuda_log().decode()
    far = OnDevice(2, [1.0], device_id=99)
    assert vecmath.describe(far) == "float32 [1]"
    m = OnDevice(13, [1.0, 2.0, 3.0])
    vecmath.scale(m, 2.0)
    assert m.values() == [2.0, 4.0, 6.0] and m.deleted == 1
    syncs = [line for line in fake.fakecuda_log().decode().splitlines() if line.startswith("cuStreamSynchronize")]
    assert syncs == ["cuStreamSynchronize stream=1"], fake.fakecuda_log().decode()
    assert fake.fakecuda_violations() == 0, fake.fakecuda_log().decode()
    assert (x.deleted, far.deleted) == (3, 1)


def test_vector_dtypes_are_refused_by_typed_slices():
    """float32x4 (code 2, bits 32, lanes 4: how DLPack says a vector of four
    floats per element) is not float32: a []float32 parameter refuses it."""
    shape, strides, memory = (ctypes.c_int64 * 1)(3), (ctypes.c_int64 * 1)(1), (ctypes.c_float * 12)(*range(12))
    t = _DLManagedTensorVersioned(1, 3, None, None, 0, ctypes.addressof(memory), 1, 0, 1, 2, 32, 4, shape, strides,
                                  0)  # CPU float32x4
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    with pytest.raises(BufferError, match="float32x4"):
        vecmath.scale(new(ctypes.addressof(t), b"dltensor_versioned", None), 2.0)
    assert list(memory) == list(range(12)), "nothing written"


def test_a_tensor_parameter_takes_any_layout_and_dtype():
    assert vecmath.describe(np.zeros((2, 3), np.float32)) == "float32 [2 3]"
    assert vecmath.describe(np.zeros((3, 4), np.int16).T) == "int16 [4 3]"
    assert vecmath.describe(np.array(1.0)) == "float64 []"


# Arguments as careful as godlpack.from_dlpack (issue 22).


def _neg_view(torch, dtype):
    """A tensor with PyTorch's negative bit set: logical value [-2.0]."""
    t = torch.tensor([1 + 2j], dtype=dtype).conj().imag
    assert t.is_neg() and t.tolist() == [-2.0]
    return t


def test_torch_negative_bit_is_refused_on_every_array_path():
    torch = pytest.importorskip("torch")
    t64 = _neg_view(torch, torch.complex128)
    for call in (lambda: vecmath.norm(t64),  # typed slice, Func1
                 lambda: vecmath.clip(t64, -10.0, 10.0),  # typed slice, reflection
                 lambda: vecmath.describe(t64),  # godlpack.Tensor
                 lambda: vecmath.mean(t64)):  # *consumer.Tensor
        with pytest.raises(BufferError, match=r"argument ('x'|'t'): .*negative bit set.*resolve_neg\(\)"):
            call()
    t32 = _neg_view(torch, torch.complex64)
    with pytest.raises(BufferError, match="negative bit"):
        vecmath.scale(t32, 1.0)
    assert t32.tolist() == [-2.0]
    assert vecmath.norm(t64.resolve_neg()) == 2.0  # resolved: the right value


def test_torch_conjugate_bit_is_refused():
    torch = pytest.importorskip("torch")
    z = torch.tensor([1 + 2j]).conj()
    assert z.is_conj()
    with pytest.raises(BufferError, match="argument 't': .*conjugate bit"):
        vecmath.describe(z)


def test_jax_arrays_are_never_written():
    jax = pytest.importorskip("jax")
    x = jax.numpy.arange(3, dtype=jax.numpy.float32)
    with pytest.raises(BufferError, match=r"scale\(\) argument 'x' is a .*ArrayImpl.*immutable"):
        vecmath.scale(x, 2.0)
    y = jax.numpy.ones(3, dtype=jax.numpy.float32)
    with pytest.raises(BufferError, match="argument 'y' .*immutable"):
        vecmath.saxpy(2.0, np.ones(3, np.float32), y)
    assert x.tolist() == [0.0, 1.0, 2.0] and y.tolist() == [1.0, 1.0, 1.0]
    # Read, not written: accepted.
    out = np.zeros(3, np.float32)
    vecmath.saxpy(2.0, x, out)
    assert out.tolist() == [0.0, 2.0, 4.0]
    assert vecmath.describe(x) == "float32 [3]"


def test_mutability_is_declared_per_argument():
    x = np.arange(3, dtype=np.float32)
    x.setflags(write=False)
    y = np.ones(3, np.float32)
    vecmath.saxpy(2.0, x, y)  # x is only read: a read-only x is fine
    assert y.tolist() == [1.0, 3.0, 5.0]
    with pytest.raises(BufferError, match="argument 'y' is read-only"):
        vecmath.saxpy(2.0, y, x)  # y is written: a read-only y is refused
    assert x.tolist() == [0.0, 1.0, 2.0]
    # A read-only array through DLPack (a subclass is not NumPy's fast path).
    sub = np.ones(3, np.float32).view(type("Sub", (np.ndarray,), {}))
    sub.setflags(write=False)
    with pytest.raises(BufferError, match="argument 'y' is read-only"):
        vecmath.saxpy(2.0, x, sub)
    vecmath.saxpy(1.0, sub, y)
    assert y.tolist() == [2.0, 4.0, 6.0]


W = dict(i=0, i8=0, i16=0, i32=0, i64=0, u=0, u8=0, u16=0, u32=0, u64=0, f32=0.0, b=False)
WN = list(W)
LIMITS = {"i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
          "i": (-2**63, 2**63 - 1), "u": (0, 2**64 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1),
          "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}
GO_NAME = {"i": "int64", "u": "uint64", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
           "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def widths(**kw):
    return vecmath.widths(*dict(W, **kw).values())


@pytest.mark.parametrize("name", list(LIMITS))
def test_every_integer_width_is_range_checked_naming_the_argument(name):
    lo, hi = LIMITS[name]
    pos = WN.index(name) + 1
    assert widths(**{name: lo}).split()[pos - 1] == str(lo)
    assert widths(**{name: hi}).split()[pos - 1] == str(hi)
    for bad in (lo - 1, hi + 1, 10**30, -10**30):
        with pytest.raises(OverflowError, match=rf"^widths\(\) argument {pos}: {bad} out of range for {GO_NAME[name]}$"):
            widths(**{name: bad})


def test_float32_is_range_checked():
    x = np.ones(2, np.float32)
    for bad in (2**200, 1e39, -1e39, 10**400):
        with pytest.raises(OverflowError, match=r"scale\(\) argument 'a': .* out of range for float32"):
            vecmath.scale(x, bad)
    assert x.tolist() == [1.0, 1.0]
    assert widths(f32=3.4e38).split()[10] != "+Inf"
    # inf and nan are float32 values: passed as they are.
    assert widths(f32=float("inf")).split()[10] == "+Inf"
    assert widths(f32=float("nan")).split()[10] == "NaN"


def test_numpy_scalars_are_accepted_where_python_scalars_are():
    x = np.ones(2, np.float32)
    vecmath.scale(x, np.float32(2.5))
    vecmath.scale(x, np.float64(2.0))
    vecmath.scale(x, np.int64(2))  # an int is a float, as float() says
    assert x.tolist() == [10.0, 10.0]
    assert widths(i=np.int64(3), i8=np.int8(-4), u8=np.uint8(255), u64=np.uint64(2**64 - 1), b=np.bool_(True),
                  f32=np.float32(2.5)) == f"3 -4 0 0 0 0 255 0 0 {2**64 - 1} 2.5 true"
    with pytest.raises(OverflowError, match="argument 2: 300 out of range for int8"):
        widths(i8=np.int64(300))


def test_a_float_is_not_an_int_and_a_bool_parameter_takes_bools_only():
    for bad in (3.0, np.float64(3.0), True, np.bool_(True), "3"):
        with pytest.raises(TypeError, match=r"widths\(\) argument 1 must be int"):
            widths(i=bad)
    for bad in (1, np.int64(1), "x"):
        with pytest.raises(TypeError, match=r"widths\(\) argument 12 must be bool"):
            widths(b=bad)
    with pytest.raises(TypeError, match=r"scale\(\) argument 'a' must be float, not str"):
        vecmath.scale(np.ones(1, np.float32), "2")


def test_rownorms_takes_a_2d_array_with_its_strides():
    x = np.arange(12.0).reshape(3, 4)
    want = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(np.from_dlpack(vecmath.rownorms(x)), want)
    np.testing.assert_allclose(np.from_dlpack(vecmath.rownorms(x.T)), np.linalg.norm(x.T, axis=1))  # no copy
    np.testing.assert_allclose(np.from_dlpack(vecmath.rownorms(x[::-1, ::2])), np.linalg.norm(x[::-1, ::2], axis=1))
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    np.testing.assert_allclose(np.from_dlpack(vecmath.rownorms(t.T)), np.linalg.norm(x.T, axis=1))
    with pytest.raises(BufferError, match=r"rownorms\(\) argument 'x': want ndim 2, got 1 \(shape \(4,\)\)"):
        vecmath.rownorms(np.arange(4.0))
    with pytest.raises(BufferError, match=r"rownorms\(\) argument 'x': want dtype float64, got float32; pass a "
                                          r"conforming copy, or allow a conversion in Go \(pyext.Convert\)"):
        vecmath.rownorms(np.zeros((2, 2), np.float32))


def test_centroid_converts_what_it_is_given():
    pts = np.array([[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]])
    assert np.from_dlpack(vecmath.centroid(pts)).tolist() == [1.0, 2.0, 3.0]
    assert np.from_dlpack(vecmath.centroid(pts.tolist())).tolist() == [1.0, 2.0, 3.0]  # a list
    assert np.from_dlpack(vecmath.centroid(pts.astype(np.float32))).tolist() == [1.0, 2.0, 3.0]  # a dtype
    assert np.from_dlpack(vecmath.centroid(np.asfortranarray(pts))).tolist() == [1.0, 2.0, 3.0]  # a layout
    buf = bytearray(pts.nbytes + 1)
    odd = np.frombuffer(buf, offset=1, dtype=np.float64).reshape(2, 3)  # unaligned, as Dask may hand over
    odd[...] = pts
    assert np.from_dlpack(vecmath.centroid(odd)).tolist() == [1.0, 2.0, 3.0]
    assert np.from_dlpack(vecmath.centroid(np.broadcast_to(pts[1], (4, 3)))).tolist() == [2.0, 4.0, 6.0]  # stride 0
    jnp = pytest.importorskip("jax.numpy")
    assert np.from_dlpack(vecmath.centroid(jnp.asarray(pts, dtype=jnp.float32))).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(BufferError, match=r"centroid\(\) argument 'points': want shape \(\*, 3\), got \(2, 2\)"):
        vecmath.centroid(np.zeros((2, 2)))  # shapes are never converted
