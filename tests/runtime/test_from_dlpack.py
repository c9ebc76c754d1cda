"""godlpack.from_dlpack as a consumer: ownership and the deleter (exactly once),
protocol negotiation, errors from and about producers, copy and device."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import godlpack
import ctypes_producer as cp
from harness import back_to, live
from ctypes_producer import IS_COPIED, READ_ONLY, CtypesProducer, capsule_name


def _arr(dtype=np.float32):
    return np.arange(12, dtype=dtype).reshape(3, 4)


# --- exactly once for good tensors -----------------------------------------------------


@pytest.mark.parametrize("versioned", [True, False])
def test_deleter_zero_while_alive_one_after(versioned):
    a = _arr()
    p = CtypesProducer(a, versioned=versioned)
    t = godlpack.from_dlpack(p)
    assert len(p.records) == 1
    assert p.deleter_calls == 0
    assert t.data_ptr == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), a)
    gc.collect()
    assert p.deleter_calls == 0
    del t
    assert p.deleter_calls == 1  # freed by refcount, no gc needed
    gc.collect()
    assert p.deleter_calls == 1
    assert p.records[0].calls == 1


def test_deleter_waits_for_every_view_and_reexport():
    a = _arr()
    p = CtypesProducer(a)
    t = godlpack.from_dlpack(p)
    views = [godlpack.from_dlpack(t), godlpack.Tensor(t)]
    arr = np.from_dlpack(t)  # NumPy holds a godlpack export
    cap = t.__dlpack__(max_version=(1, 3))  # an unconsumed capsule too
    del t
    gc.collect()
    assert p.deleter_calls == 0
    del views
    gc.collect()
    assert p.deleter_calls == 0
    assert arr.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(arr, a)
    del arr
    gc.collect()
    assert p.deleter_calls == 0
    del cap
    gc.collect()
    assert p.deleter_calls == 1


def test_versioned_flags_are_read():
    p = CtypesProducer(_arr(), flags=READ_ONLY)
    t = godlpack.from_dlpack(p)
    assert t.readonly and not t.is_copied
    with pytest.raises(TypeError):
        memoryview(t)[0, 0] = 1.0
    del t
    p2 = CtypesProducer(_arr(), flags=IS_COPIED)
    t2 = godlpack.from_dlpack(p2)
    assert t2.is_copied and not t2.readonly
    del t2
    assert p.deleter_calls == 1 and p2.deleter_calls == 1


def test_legacy_import_is_writable_and_not_copied():
    t = godlpack.from_dlpack(CtypesProducer(_arr(), versioned=False))
    assert not t.readonly and not t.is_copied
    assert not memoryview(t).readonly


# --- protocol negotiation -----------------------------------------------------------------


def test_asks_for_max_version_1_3():
    p = CtypesProducer(_arr())
    t = godlpack.from_dlpack(p)
    assert p.calls == [{"max_version": (1, 3), "stream": None}]  # stream=None said out loud: PyTorch reads a missing one as -1
    assert type(p.records[0].managed).__name__ == "DLManagedTensorVersioned"
    del t
    assert p.deleter_calls == 1


def test_legacy_producer_fallback():
    a = _arr()
    p = CtypesProducer(a, legacy_signature=True, versioned=False)
    t = godlpack.from_dlpack(p)
    assert p.calls == [{"stream": None}], "must retry without max_version after TypeError, stream=None kept"
    assert t.data_ptr == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), a)
    assert p.deleter_calls == 0
    del t
    assert p.deleter_calls == 1


def test_legacy_producer_fallback_with_copy_and_device():
    a = _arr()
    p = CtypesProducer(a, legacy_signature=True, versioned=False)
    t = godlpack.from_dlpack(p, copy=True, device=(1, 0))
    assert p.calls == [{"stream": None}]  # dl_device and copy refused too: the legacy signature
    # The legacy producer could not copy: godlpack did, and released the original.
    assert p.deleter_calls == 1
    assert t.is_copied and t.data_ptr != a.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), a)


class _LegacyStreamProducer:
    """A pre-2023 producer: __dlpack__(stream=...) only, recording whether a
    stream was passed at all (a missing one is its own default, not None)."""

    def __init__(self, inner):
        self.inner, self.streams = inner, []

    def __dlpack__(self, *, stream="missing"):
        self.streams.append(stream)
        return self.inner.__dlpack__(stream=None) if stream != "missing" else self.inner.__dlpack__()

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def test_the_legacy_retry_passes_stream_none_explicitly():
    """The retry after a TypeError for max_version keeps stream=None: it used
    to call __dlpack__() with no stream, which means something else to some
    producers (PyTorch's default is -1: no synchronisation)."""
    a = _arr()
    p = _LegacyStreamProducer(CtypesProducer(a, legacy_signature=True, versioned=False))
    t = godlpack.from_dlpack(p)
    assert p.streams == [None] and t.data_ptr == a.ctypes.data


def test_the_legacy_retry_keeps_dl_device_and_copy_when_the_producer_takes_them():
    """A producer that refuses only max_version gets dl_device and copy again."""
    calls = []

    class NoMaxVersion:
        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self, *, stream=None, dl_device=None, copy=None, **kw):
            calls.append(dict(stream=stream, dl_device=dl_device, copy=copy, **kw))
            if kw:
                raise TypeError(f"unexpected keyword {sorted(kw)[0]!r}")
            return self.inner.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

    a = _arr()
    t = godlpack.from_dlpack(NoMaxVersion(CtypesProducer(a, versioned=False)), copy=False, device=(1, 0))
    assert calls[-1] == {"stream": None, "dl_device": (1, 0), "copy": False}, calls
    assert len(calls) == 2 and t.data_ptr == a.ctypes.data


def test_producer_returning_legacy_despite_max_version():
    a = _arr()
    p = CtypesProducer(a, versioned=False)  # like JAX: always "dltensor"
    t = godlpack.from_dlpack(p)
    assert p.calls == [{"max_version": (1, 3), "stream": None}]
    assert t.data_ptr == a.ctypes.data and not t.readonly
    del t
    assert p.deleter_calls == 1


def test_copy_and_device_are_forwarded():
    p = CtypesProducer(_arr())
    t = godlpack.from_dlpack(p, copy=False, device=(1, 0))
    assert p.calls == [{"max_version": (1, 3), "stream": None, "dl_device": (1, 0), "copy": False}]
    assert t.data_ptr == p.array.ctypes.data
    del t
    assert p.deleter_calls == 1


# --- errors from and about producers --------------------------------------------------------


@pytest.mark.parametrize(
    "exc", [ValueError("producer says no"), BufferError("cannot export"), RuntimeError("boom"), AttributeError("inner")]
)
def test_producer_exception_propagates(exc):
    p = CtypesProducer(_arr(), raises=exc)
    with pytest.raises(type(exc), match=str(exc)):
        godlpack.from_dlpack(p)
    assert p.records == []


def test_producer_typeerror_propagates_after_legacy_retry():
    p = CtypesProducer(_arr(), raises=TypeError("bad producer"))
    with pytest.raises(TypeError, match="bad producer"):
        godlpack.from_dlpack(p)
    assert len(p.calls) == 2 and p.calls[1] == {"stream": None}


@pytest.mark.parametrize("value", [None, 42, b"dltensor", "dltensor", (1, 2), np.zeros(3)])
def test_producer_returning_non_capsule_is_buffererror(value):
    p = CtypesProducer(_arr(), returns=value)
    with pytest.raises(BufferError, match="PyCapsule"):
        godlpack.from_dlpack(p)


@pytest.mark.parametrize("name", [b"not_a_tensor", b"DLTENSOR", b"dltensor_versioned_x", b""])
def test_capsule_with_wrong_name_is_buffererror_and_not_deleted(name):
    p = CtypesProducer(_arr(), name=name)
    with pytest.raises(BufferError, match="not a DLPack"):
        godlpack.from_dlpack(p)
    assert len(p.records) == 1
    gc.collect()
    assert p.deleter_calls == 0, "a foreign capsule's tensor is not ours to delete"
    cap = p.capsule()
    with pytest.raises(BufferError):
        godlpack.from_dlpack(cap)
    assert capsule_name(cap) == name.decode(), "a refused capsule must not be renamed"
    del cap
    gc.collect()
    assert p.deleter_calls == 0


def test_capsule_named_used_is_refused():
    p = CtypesProducer(_arr(), name=b"used_dltensor_versioned")
    with pytest.raises(BufferError, match="consumed"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 0


@pytest.mark.parametrize("obj", [1, 2.5, [1, 2], (1,), "abc", None, object(), b"x", {"a": 1}])
def test_objects_without_dlpack_are_typeerror(obj):
    with pytest.raises(TypeError, match="DLPack"):
        godlpack.from_dlpack(obj)
    with pytest.raises(TypeError):
        godlpack.Tensor(obj)


def test_non_dlpack_capsule_is_buffererror():
    import datetime

    cap = datetime.datetime_CAPI  # a PyCapsule named "datetime.datetime_CAPI"
    with pytest.raises(BufferError, match="datetime"):
        godlpack.from_dlpack(cap)
    assert capsule_name(cap) == "datetime.datetime_CAPI"


# --- raw capsules ---------------------------------------------------------------------


@pytest.mark.parametrize("versioned", [True, False])
def test_raw_capsule_from_ctypes_producer(versioned):
    a = _arr()
    p = CtypesProducer(a)
    cap = p.capsule(versioned)
    t = godlpack.from_dlpack(cap)
    assert capsule_name(cap) == ("used_dltensor_versioned" if versioned else "used_dltensor")
    assert t.data_ptr == a.ctypes.data
    del cap
    gc.collect()
    assert p.deleter_calls == 0
    del t
    assert p.deleter_calls == 1


def test_raw_capsule_from_numpy_and_godlpack():
    a = _arr(np.int64)
    cap = a.__dlpack__(max_version=(1, 3))
    t = godlpack.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert t.data_ptr == a.ctypes.data and t.dtype == "int64"
    u = godlpack.from_dlpack(t.__dlpack__())
    assert u.data_ptr == a.ctypes.data
    with pytest.raises(BufferError):
        godlpack.from_dlpack(cap)


# --- copy and device ------------------------------------------------------------------


def test_copy_true_gives_new_memory_and_releases_producer():
    a = _arr()
    p = CtypesProducer(a)
    t = godlpack.from_dlpack(p, copy=True)
    assert t.is_copied
    assert t.data_ptr != a.ctypes.data
    assert t.data_ptr % 64 == 0
    assert p.deleter_calls == 1, "the producer's tensor is released once the copy is made"
    a[0, 0] = 100
    assert t.tolist()[0][0] == 0.0


def test_copy_false_with_copying_producer_is_buffererror():
    p = CtypesProducer(_arr(), flags=IS_COPIED)
    with pytest.raises(BufferError, match="copy"):
        godlpack.from_dlpack(p, copy=False)
    assert p.deleter_calls == 1


def test_copy_true_with_copying_producer_does_not_copy_twice():
    a = _arr()
    p = CtypesProducer(a, flags=IS_COPIED)
    t = godlpack.from_dlpack(p, copy=True)
    assert t.data_ptr == a.ctypes.data and t.is_copied
    assert p.deleter_calls == 0
    del t
    assert p.deleter_calls == 1


def test_copy_of_numpy_and_godlpack_tensors():
    a = _arr(np.float64)
    t = godlpack.from_dlpack(a, copy=True)
    assert t.is_copied and t.data_ptr != a.ctypes.data
    np.testing.assert_array_equal(np.asarray(t), a)
    u = godlpack.from_dlpack(t, copy=True)
    assert u.is_copied and u.data_ptr != t.data_ptr
    v = godlpack.from_dlpack(t, copy=False)
    assert v.data_ptr == t.data_ptr
    w = godlpack.from_dlpack(a, copy=False)
    assert w.data_ptr == a.ctypes.data and not w.is_copied


def test_copy_of_noncontiguous_is_compact():
    a = np.arange(24, dtype=np.int16).reshape(4, 6)[::-2, 1::2]
    # A producer that cannot copy (legacy signature): godlpack copies, compactly.
    p = CtypesProducer(a, legacy_signature=True, versioned=False)
    t = godlpack.from_dlpack(p, copy=True)
    assert t.is_copied and t.is_contiguous and t.strides == (3, 1)
    assert t.tolist() == a.tolist()
    assert np.from_dlpack(t).tolist() == a.tolist()
    assert p.deleter_calls == 1
    g = godlpack.from_dlpack(a.T)
    c = godlpack.from_dlpack(g, copy=True)
    assert c.is_copied and c.is_contiguous and c.strides == (2, 1)
    assert c.tolist() == a.T.tolist()
    # NumPy copies for us when asked (its copy may keep its own layout order).
    n = godlpack.from_dlpack(a.T, copy=True)
    assert n.is_copied and n.data_ptr != a.ctypes.data and n.tolist() == a.T.tolist()


@pytest.mark.parametrize("device", [(1, 0), godlpack.Device(1, 0)])
def test_device_cpu_works(device):
    a = _arr()
    t = godlpack.from_dlpack(a, device=device)
    assert t.device == (1, 0) and t.data_ptr == a.ctypes.data
    u = godlpack.from_dlpack(t, device=device)
    assert u.data_ptr == a.ctypes.data


@pytest.mark.parametrize("device", [(2, 0), (1, 1), (10, 0)])
def test_device_other_on_cpu_array_is_buffererror(device):
    a = _arr()
    with pytest.raises(BufferError):
        godlpack.from_dlpack(a, device=device)
    t = godlpack.from_dlpack(a)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(t, device=device)
    p = CtypesProducer(a)  # ignores dl_device: godlpack checks the result and would copy to a GPU itself
    with pytest.raises(BufferError, match="device|CUDA driver"):
        godlpack.from_dlpack(p, device=device)
    assert p.deleter_calls == 1


@pytest.mark.parametrize("kwargs", [{"copy": 1}, {"copy": "no"}, {"device": "cpu"}, {"device": (1,)}, {"stream": "x"}, {"bogus": 1}])
def test_bad_keyword_arguments_are_typeerror(kwargs):
    with pytest.raises(TypeError):
        godlpack.from_dlpack(_arr(), **kwargs)


def test_positional_arguments_checked():
    with pytest.raises(TypeError):
        godlpack.from_dlpack()
    with pytest.raises(TypeError):
        godlpack.from_dlpack(_arr(), None)
    with pytest.raises(TypeError):
        godlpack.Tensor()


def test_tensor_constructor_is_from_dlpack():
    a = _arr()
    p = CtypesProducer(a)
    t = godlpack.Tensor(p)
    assert isinstance(t, godlpack.Tensor)
    assert t.data_ptr == a.ctypes.data and t.shape == (3, 4) and t.dtype == "float32"
    assert godlpack.Tensor(obj=a).data_ptr == a.ctypes.data
    assert p.deleter_calls == 0
    del t
    assert p.deleter_calls == 1


# --- non-CPU devices (no GPU needed: the memory is never touched) -------------------------


def test_fake_cuda_tensor_is_imported_but_never_dereferenced():
    fake = 0x10000  # a device address: godlpack must not read it
    p = CtypesProducer(_arr(), device=(2, 1), data=fake)
    t = godlpack.from_dlpack(p)
    assert t.device == (2, 1) and str(t.device) == "cuda:1"
    assert t.data_ptr == fake
    assert t.__dlpack_device__() == (2, 1)
    with pytest.raises(BufferError):
        t.tolist()
    with pytest.raises(BufferError):
        memoryview(t)
    with pytest.raises(BufferError):
        t.copy()
    with pytest.raises(BufferError, match="stream=0"):
        t.__dlpack__(max_version=(1, 3), stream=0)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(t, device=(1, 0))
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(t)
    # Re-export on its own device, on the stream it is already ordered on: zero-copy.
    cap = t.__dlpack__(max_version=(1, 3), stream=1, dl_device=(2, 1))
    u = godlpack.from_dlpack(cap)
    assert u.device == (2, 1) and u.data_ptr == fake
    del t, u, cap
    gc.collect()
    assert p.deleter_calls == 1


def test_fake_opencl_tensor_cannot_be_copied_or_moved():
    p = CtypesProducer(_arr(), device=(4, 0), data=0x20000)
    t = godlpack.from_dlpack(p)
    assert t.device == (4, 0) and str(t.device) == "opencl:0"
    assert not godlpack.is_cpu_accessible(t.device)
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), copy=True)
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    with pytest.raises(BufferError):
        godlpack.from_dlpack(t, copy=True)
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(max_version=(1, 3), stream=1)  # no streams on OpenCL here
    cap = t.__dlpack__(max_version=(1, 3))
    assert godlpack.from_dlpack(cap).data_ptr == 0x20000
    del t, cap
    gc.collect()
    assert p.deleter_calls == 1


def test_cuda_host_memory_is_cpu_accessible():
    a = _arr()
    p = CtypesProducer(a, device=(3, 0))
    t = godlpack.from_dlpack(p)
    assert t.device == (3, 0) and str(t.device) == "cuda_host:0"
    assert t.tolist() == a.tolist()
    cap = t.__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    u = godlpack.from_dlpack(cap)
    assert u.device == (1, 0) and u.data_ptr == a.ctypes.data
    v = godlpack.from_dlpack(t, device=(1, 0))
    assert v.device == (1, 0) and v.data_ptr == a.ctypes.data
    del t, u, v, cap
    assert p.deleter_calls == 1
    p2 = CtypesProducer(a, device=(13, 0))
    w = godlpack.from_dlpack(p2, device=(1, 0))
    assert w.device == (1, 0) and w.data_ptr == a.ctypes.data
    del w
    assert p2.deleter_calls == 1


def test_live_counters_count_foreign_owners():
    base = live()
    p = CtypesProducer(_arr())
    t = godlpack.from_dlpack(p)
    assert live()[0] == base[0] + 1
    cap = t.__dlpack__(max_version=(1, 3))
    assert live()[1] == base[1] + 1
    del t, cap
    gc.collect()
    assert back_to(base)


def test_a_direct_dlpack_call_follows_changes_to_the_type():
    """from_dlpack calls a dict-less type's C __dlpack__ directly (no lookup
    per call); a class whose __dlpack__ is replaced later gets the new one."""

    class Slotted(np.ndarray):
        __slots__ = ()

    x = np.arange(4.0).view(Slotted)
    for _ in range(3):  # cached from the second call on
        assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]

    def refuse(self, **kw):
        raise BufferError("Slotted refuses export")

    Slotted.__dlpack__ = refuse
    with pytest.raises(BufferError, match="Slotted refuses export"):
        godlpack.from_dlpack(x)
    del Slotted.__dlpack__
    assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("hook", ["__getattribute__", "__getattr__"])
def test_a_direct_dlpack_call_honours_attribute_hooks(hook):
    """A dict-less type that customises attribute access gets __dlpack__ the
    way `obj.__dlpack__` would, as NumPy's from_dlpack does, not through a
    cached method that skips the hook."""
    other = np.arange(10.0, 13.0)

    def lookup(self, name):
        if name == "__dlpack__":
            return other.__dlpack__
        return object.__getattribute__(self, name)

    cls = type("Hooked", (np.ndarray,), {"__slots__": (), hook: lookup})
    if hook == "__getattr__":  # only asked when the normal lookup fails
        cls.__dlpack__ = property(lambda self: (_ for _ in ()).throw(AttributeError("__dlpack__")))
    x = np.arange(3.0).view(cls)
    want = np.from_dlpack(x).tolist()
    assert want == [10.0, 11.0, 12.0]
    for _ in range(3):  # cached from the second call on
        assert godlpack.from_dlpack(x).tolist() == want


def test_the_type_cache_keeps_no_class_alive():
    """from_dlpack caches what it learnt about a producer's type, but a class
    the program drops (and all its methods reference) is freed as usual."""
    payload = np.arange(1_000.0)

    def make():
        class Producer:
            __slots__ = ()

            def __dlpack__(self, **kw):
                return payload[:3].__dlpack__(**kw)

        class Slotted(np.ndarray):  # its C __dlpack__ is called directly
            __slots__ = ()

        return Producer, Slotted

    P, S = make()
    assert godlpack.from_dlpack(P()).tolist() == [0.0, 1.0, 2.0]
    assert godlpack.from_dlpack(payload[:2].view(S)).tolist() == [0.0, 1.0]
    refs = [weakref.ref(P), weakref.ref(S)]
    del P, S
    gc.collect()
    assert [r() for r in refs] == [None, None]
    # The entries are gone with them: new types at those addresses are read afresh.
    for k in range(3):
        Q = type(f"Q{k}", (), {"__dlpack__": lambda self, k=k, **kw: np.full(2, float(k)).__dlpack__(**kw)})
        assert godlpack.from_dlpack(Q()).tolist() == [float(k)] * 2


# --- legacy imports are writable (the documented policy) -----------------------

def test_legacy_imports_are_writable_and_reexported_so():
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32), versioned=False, legacy_signature=True)
    t = godlpack.from_dlpack(p)
    assert p.calls and "max_version" not in p.calls[-1] and not t.readonly
    cap = t.__dlpack__(max_version=(1, 3))
    assert cp.read_versioned(cap).flags & cp.READ_ONLY == 0
    del cap
    assert np.from_dlpack(t).flags.writeable
    legacy = t.__dlpack__()  # re-exported as legacy too (read-only tensors cannot be)
    assert cp.capsule_name(legacy) == "dltensor"
    del legacy
    # A versioned READ_ONLY producer is honoured, and then refuses legacy export.
    ro = godlpack.from_dlpack(cp.CtypesProducer(np.arange(4, dtype=np.float32), flags=cp.READ_ONLY))
    assert ro.readonly
    with pytest.raises(BufferError):
        ro.__dlpack__()
