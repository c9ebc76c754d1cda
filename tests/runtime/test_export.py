"""Tensor.__dlpack__: versions, copy, dl_device, stream, argument checking,
fresh capsules per call, capsule names before and after consumption."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import godlpack
from harness import back_to, child_env, live
from godlpack import _godlpack
from ctypes_producer import (
    IS_COPIED,
    READ_ONLY,
    DLManagedTensorVersioned,
    capsule_name,
    capsule_pointer,
    read_legacy,
    read_versioned,
)


@pytest.fixture
def t():
    return godlpack.arange(12, dtype="float32")


@pytest.fixture
def t2d():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    return godlpack.from_dlpack(a), a


# --- max_version -----------------------------------------------------------------


@pytest.mark.parametrize("mv", [None, (0, 0), (0, 8), (0, 99)])
def test_legacy_capsule_for_none_or_major_zero(t, mv):
    cap = t.__dlpack__() if mv is None else t.__dlpack__(max_version=mv)
    assert type(cap).__name__ == "PyCapsule"
    assert capsule_name(cap) == "dltensor"
    m = read_legacy(cap)
    assert m.dl_tensor.data == t.data_ptr
    assert m.dl_tensor.ndim == 1
    assert m.dl_tensor.shape[0] == 12
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == (2, 32, 1)
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == (1, 0)


@pytest.mark.parametrize("mv", [(1, 0), (1, 3), (1, 7), (2, 0), (99, 99)])
def test_versioned_capsule_for_major_one_or_more(t, mv):
    cap = t.__dlpack__(max_version=mv)
    assert capsule_name(cap) == "dltensor_versioned"
    m = read_versioned(cap)
    assert (m.version.major, m.version.minor) == (1, 3)
    assert m.flags == 0
    assert m.deleter is not None
    assert m.dl_tensor.data == t.data_ptr
    assert m.dl_tensor.ndim == 1 and m.dl_tensor.shape[0] == 12
    # DLPack >= 1.2: strides are always filled in.
    assert bool(m.dl_tensor.strides) and m.dl_tensor.strides[0] == 1


def test_versioned_strides_and_byte_offset_of_view(t2d):
    g, a = t2d
    v = godlpack.from_dlpack(a[1:, ::2])
    cap_m = v.__dlpack__(max_version=(1, 3))  # alive while m is read
    m = read_versioned(cap_m)
    assert [m.dl_tensor.shape[i] for i in range(2)] == [2, 2]
    assert [m.dl_tensor.strides[i] for i in range(2)] == [4, 2]
    assert m.dl_tensor.data + m.dl_tensor.byte_offset == a[1:, ::2].ctypes.data


def test_fresh_capsule_and_managed_tensor_per_call(t):
    base = live()
    caps = [t.__dlpack__(max_version=(1, 3)) for _ in range(3)] + [t.__dlpack__() for _ in range(2)]
    assert len({id(c) for c in caps}) == 5
    ptrs = {capsule_pointer(c) for c in caps}
    assert len(ptrs) == 5, "every __dlpack__ call must make a new managed tensor"
    assert live()[1] == base[1] + 5
    del caps
    gc.collect()
    assert back_to(base)  # unconsumed capsules' destructors call the deleters


# --- flags -------------------------------------------------------------------------------


def test_copy_true_new_pointer_and_is_copied(t):
    cap = t.__dlpack__(max_version=(1, 3), copy=True)
    m = read_versioned(cap)
    assert m.flags & IS_COPIED
    assert not m.flags & READ_ONLY
    assert m.dl_tensor.data + m.dl_tensor.byte_offset != t.data_ptr
    out = np.from_dlpack(_Cap(cap))
    assert out.tolist() == list(range(12))


def test_copy_true_of_noncontiguous_is_compact(t2d):
    g, a = t2d
    v = godlpack.from_dlpack(a.T)
    cap = v.__dlpack__(max_version=(1, 3), copy=True)
    m = read_versioned(cap)
    assert m.flags & IS_COPIED
    assert [m.dl_tensor.strides[i] for i in range(2)] == [3, 1]
    c = godlpack.from_dlpack(cap)
    assert c.is_copied and c.is_contiguous
    np.testing.assert_array_equal(np.asarray(c), a.T)


def test_copy_true_legacy_is_a_copy(t):
    cap = t.__dlpack__(copy=True)
    assert capsule_name(cap) == "dltensor"
    m = read_legacy(cap)
    assert m.dl_tensor.data + m.dl_tensor.byte_offset != t.data_ptr
    c = godlpack.from_dlpack(cap)
    assert c.tolist() == t.tolist()


def test_copy_false_and_none_are_zero_copy(t):
    for copy in (False, None):
        cap_m = t.__dlpack__(max_version=(1, 3), copy=copy)  # alive while m is read
        m = read_versioned(cap_m)
        assert m.dl_tensor.data + m.dl_tensor.byte_offset == t.data_ptr
        assert not m.flags & IS_COPIED


def test_readonly_flags_and_legacy_refusal():
    a = np.arange(6, dtype=np.int32)
    a.flags.writeable = False
    g = godlpack.from_dlpack(a)
    assert g.readonly
    with pytest.raises(BufferError, match="read-only"):
        g.__dlpack__()
    with pytest.raises(BufferError, match="read-only"):
        g.__dlpack__(max_version=(0, 8))
    cap_m = g.__dlpack__(max_version=(1, 0))  # alive while m is read
    m = read_versioned(cap_m)
    assert m.flags & READ_ONLY
    assert not m.flags & IS_COPIED
    # A copy is ours to write: no READ_ONLY, and legacy is then fine.
    cap_m2 = g.__dlpack__(max_version=(1, 3), copy=True)  # alive while m2 is read
    m2 = read_versioned(cap_m2)
    assert m2.flags == IS_COPIED
    assert capsule_name(g.__dlpack__(copy=True)) == "dltensor"


# --- dl_device and stream ---------------------------------------------------------------


@pytest.mark.parametrize("dev", [(1, 0), None])
def test_dl_device_cpu_ok(t, dev):
    cap = t.__dlpack__(max_version=(1, 3), dl_device=dev)
    m = read_versioned(cap)
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == (1, 0)
    assert m.dl_tensor.data == t.data_ptr


@pytest.mark.parametrize("dev", [(1, 1), (3, 0), (4, 0), (7, 0), (11, 0), (99, 0)])
def test_dl_device_other_raises_buffererror(t, dev):
    base = live()
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=dev)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=dev)
    assert back_to(base)


def _cuda_driver() -> bool:
    status = getattr(_godlpack, "cuda_status", None)
    return bool(status is not None and status()[0])


def _check_gpu_from_cpu(t, dev) -> None:
    """With a CUDA driver: a host-to-device copy, never with copy=False."""
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=dev, copy=False)
    if dev[0] == 13:  # copies go to CUDA device memory only, not to managed memory
        with pytest.raises(BufferError, match=r"to device \(13, 0\)"):
            t.__dlpack__(max_version=(1, 3), dl_device=dev)
        return
    cap = t.__dlpack__(max_version=(1, 3), dl_device=dev)
    m = read_versioned(cap)
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == dev
    assert m.flags & IS_COPIED
    assert m.dl_tensor.data != t.data_ptr


@pytest.mark.parametrize("dev", [(2, 0), (13, 0)])
def test_dl_device_gpu_from_cpu_without_driver(t, dev):
    """A CPU tensor reaches a GPU only through a copy: without a driver, not at all."""
    if _cuda_driver():
        pytest.skip("a CUDA driver is loaded: test_dl_device_gpu_from_cpu_with_driver runs instead")
    base = live()
    for copy in (False, None, True):
        with pytest.raises(BufferError):
            t.__dlpack__(max_version=(1, 3), dl_device=dev, copy=copy)
    assert back_to(base)


@pytest.mark.parametrize("dev", [(2, 0), (13, 0)])
def test_dl_device_gpu_from_cpu_with_driver(t, dev):
    if not _cuda_driver():
        pytest.skip("no CUDA driver (test_dl_device_gpu_from_cpu_with_stand_in_driver runs this)")
    _check_gpu_from_cpu(t, dev)


@pytest.mark.parametrize("dev", [(2, 0), (13, 0)])
def test_dl_device_gpu_from_cpu_with_stand_in_driver(tmp_path, dev):
    """The driver branch, run against tests/runtime/fakecuda (host memory as device
    memory) in a process of its own: godlpack loads its driver once."""
    import os
    import subprocess
    import sys

    from fakecuda import driver

    here = os.path.dirname(os.path.abspath(__file__))
    lib = driver.build(str(tmp_path))
    code = (f"import sys; sys.path[:0] = [{here!r}]\n"
            "import godlpack, test_export as te\n"
            f"te._check_gpu_from_cpu(godlpack.arange(10, dtype='float32'), {dev!r})\nprint('ok')\n")
    env = child_env(here, GODLPACK_LIBCUDA=lib)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=here)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr


def test_dl_device_accepts_godlpack_device_and_intenum(t):
    cap = t.__dlpack__(max_version=(1, 3), dl_device=godlpack.Device(godlpack.DLDeviceType.CPU, 0))
    assert capsule_name(cap) == "dltensor_versioned"


@pytest.mark.parametrize("stream", [None, -1])
def test_stream_none_or_minus_one_on_cpu(t, stream):
    cap = t.__dlpack__(stream=stream, max_version=(1, 3))
    assert read_versioned(cap).dl_tensor.data == t.data_ptr


@pytest.mark.parametrize("stream", [0, 1, 2, 7, 2**70, -2])
def test_stream_other_on_cpu_raises_buffererror(t, stream):
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=stream)
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=stream, max_version=(1, 3))


# --- argument checking -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_version": 1},
        {"max_version": (1,)},
        {"max_version": (1, 0, 0)},
        {"max_version": [1, 0]},
        {"max_version": ("1", "0")},
        {"max_version": (1.0, 0)},
        {"copy": 1},
        {"copy": "yes"},
        {"dl_device": "cpu"},
        {"dl_device": (1,)},
        {"dl_device": (1.0, 0)},
        {"stream": "0"},
        {"stream": 1.5},
        {"stream": True},
        {"bogus": 1},
    ],
)
def test_bad_argument_types_raise_typeerror(t, kwargs):
    base = live()
    with pytest.raises(TypeError):
        t.__dlpack__(**kwargs)
    assert back_to(base)


def test_positional_arguments_raise_typeerror(t):
    with pytest.raises(TypeError):
        t.__dlpack__(None)
    with pytest.raises(TypeError):
        t.__dlpack__(None, (1, 3))


def test_dlpack_device(t):
    d = t.__dlpack_device__()
    assert d == (1, 0)
    assert all(type(x) is int or isinstance(x, int) for x in d)


# --- names before and after consumption ----------------------------------------------


class _Cap:
    """Wraps one capsule for consumers that want __dlpack__ (NumPy)."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("mv,name", [((1, 3), "dltensor_versioned"), (None, "dltensor")])
def test_capsule_names_before_and_after_godlpack_consumes(t, mv, name):
    cap = t.__dlpack__(max_version=mv)
    assert capsule_name(cap) == name
    g = godlpack.from_dlpack(cap)
    assert capsule_name(cap) == "used_" + name
    assert g.data_ptr == t.data_ptr
    with pytest.raises(BufferError, match="consumed"):
        godlpack.from_dlpack(cap)
    assert capsule_name(cap) == "used_" + name
    assert g.tolist() == t.tolist()


def test_capsule_names_after_numpy_and_torch_consume(t):
    torch = pytest.importorskip("torch", reason="optional peer torch not installed")

    cap = t.__dlpack__(max_version=(1, 3))
    arr = np.from_dlpack(_Cap(cap))
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert arr.ctypes.data == t.data_ptr
    with pytest.raises(BufferError):
        godlpack.from_dlpack(cap)
    cap2 = t.__dlpack__()
    tt = torch.from_dlpack(cap2)
    assert capsule_name(cap2) == "used_dltensor"
    assert tt.data_ptr() == t.data_ptr


def test_consumed_capsule_keeps_memory_alive_after_source_dies():
    g = godlpack.arange(1000, dtype="int64")
    ptr = g.data_ptr
    cap = g.__dlpack__(max_version=(1, 3))
    del g
    gc.collect()
    h = godlpack.from_dlpack(cap)
    del cap
    gc.collect()
    assert h.data_ptr == ptr
    assert h.tolist() == list(range(1000))


def test_unconsumed_capsule_frees_on_its_own():
    base = live()
    g = godlpack.zeros((4, 4), "float32")
    caps = [g.__dlpack__(max_version=(1, 3)), g.__dlpack__()]
    with_g = live()
    del g
    gc.collect()
    assert live() == with_g  # the capsules keep the owner alive
    del caps
    gc.collect()
    assert back_to(base)


def test_deleter_of_export_runs_exactly_once_through_ctypes():
    import ctypes

    base = live()
    g = godlpack.full((3,), 2.5, "float64")
    with_g = live()
    cap = g.__dlpack__(max_version=(1, 3))
    m = DLManagedTensorVersioned.from_address(capsule_pointer(cap))
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(m.deleter)
    # Take ownership as a consumer would: rename, then call the deleter once.
    set_name = ctypes.pythonapi.PyCapsule_SetName
    set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
    set_name.restype = ctypes.c_int
    used = ctypes.create_string_buffer(b"used_dltensor_versioned")
    assert set_name(cap, used) == 0
    addr = capsule_pointer(cap)
    assert live()[1] == with_g[1] + 1
    del cap  # destructor must not call the deleter for a used capsule
    gc.collect()
    assert live()[1] == with_g[1] + 1
    deleter(addr)
    assert live() == with_g
    del g
    gc.collect()
    assert back_to(base)
    _keep = used  # noqa: F841


def test_capsules_freed_during_exception_unwinding_keep_the_exception():
    """Capsule destructors (and the deleters they run) must not clobber an
    exception in flight."""
    from ctypes_producer import CtypesProducer

    p = CtypesProducer(np.arange(4.0))

    def f():
        g = godlpack.from_dlpack(p)
        caps = [g.__dlpack__(max_version=(1, 3)), g.__dlpack__()]  # noqa: F841
        del g
        raise KeyError("kept")

    with pytest.raises(KeyError, match="kept"):
        f()
    gc.collect()
    assert p.deleter_calls == 1
    a = np.arange(3.0)

    def h():
        t = godlpack.from_dlpack(a)
        cap = t.__dlpack__(max_version=(1, 3))  # noqa: F841
        raise LookupError("also kept")

    with pytest.raises(LookupError, match="also kept"):
        h()


def test_keyword_slots_follow_each_call_not_the_last_one(t):
    """__dlpack__ remembers the slots of the last keyword-names tuple: calls
    whose names come in other orders (other tuples) alternate with it."""
    for _ in range(3):
        a = t.__dlpack__(max_version=(1, 3), copy=True)
        b = t.__dlpack__(copy=False, max_version=None)
        c = t.__dlpack__(dl_device=(1, 0), max_version=(1, 0), copy=None)
        d = t.__dlpack__(copy=True)
        assert capsule_name(a) == "dltensor_versioned" and read_versioned(a).flags & IS_COPIED
        assert capsule_name(b) == "dltensor" and read_legacy(b).dl_tensor.data == t.data_ptr
        assert capsule_name(c) == "dltensor_versioned" and not read_versioned(c).flags & IS_COPIED
        assert capsule_name(d) == "dltensor" and read_legacy(d).dl_tensor.data != t.data_ptr
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_versions'"):
        t.__dlpack__(max_versions=(1, 3))
