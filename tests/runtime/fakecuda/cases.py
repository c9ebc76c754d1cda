"""Checks of godlpack's CUDA code against the stand-in driver.

Each ``case_*`` function runs in a fresh process whose GODLPACK_LIBCUDA names
the stand-in driver (tests/runtime/test_fakecuda.py starts them): the driver is
loaded once per process. GPU tensors are hand-made DLPack producers with
device type CUDA (2), CUDAHost (3) or CUDAManaged (13) whose data is a NumPy
buffer declared to the driver as device memory.
"""
from __future__ import annotations

import ctypes
import gc
import threading

import numpy as np

import godlpack
from ctypes_producer import (IS_COPIED, CtypesProducer, DLManagedTensorVersioned, DLPackVersion, capsule_name,
                             capsule_pointer, read_versioned)
from fakecuda.driver import FakeCuda
from godlpack import _godlpack

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
drv = FakeCuda()
# Streams as another library makes them (the stand-in refuses made-up handles).
S5, S6, S7, S9 = (drv.stream() for _ in range(4))


def gpu(array, device=(CUDA, 0), stream=None, **kw):
    """A godlpack tensor on a (stand-in) GPU over array's buffer."""
    drv.register(array)
    p = CtypesProducer(array, device=device, **kw)
    return p, godlpack.from_dlpack(p, stream=stream)


def dropped():
    """Collects garbage and asserts the driver is back where it started
    (once the pinned blocks kept for reuse are freed)."""
    gc.collect()
    _godlpack._cuda_trim()
    assert _godlpack._live() == (0, 0), _godlpack._live()
    drv.balanced()


def device_of(cap):
    d = read_versioned(cap).dl_tensor.device
    return (d.device_type, d.device_id)


def between(names, first, then):
    """The calls logged after the first `first` call, up to and including `then`."""
    i = names.index(first)
    return names[i:names.index(then, i) + 1]


# --- the driver is the stand-in ---------------------------------------------

def case_the_stand_in_driver_is_loaded():
    assert _godlpack.cuda_status() == (True, "")
    assert drv.count("cuInit") == 1
    dropped()


# --- item 1: empty tensors copy zero bytes whatever their strides ------------------

EMPTY = [([3, 0], [-(1 << 20), 1]), ([2, 3, 0], [-(1 << 21), -7, 1]), ([0, 3], [1, -(1 << 20)]),
         ([4, 0, 2], [-(1 << 19), 5, -(1 << 22)])]


def case_empty_views_copy_zero_bytes_host_to_device():
    buf = np.zeros(16, np.uint8)
    for shape, strides in EMPTY:
        t = godlpack.from_dlpack(CtypesProducer(buf, dtype=(1, 8, 1), shape=shape, strides=strides))
        _godlpack._cuda_trim()  # no kept block: the copy allocates
        drv.reset()
        cap = t.__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0))
        m = read_versioned(cap)
        assert device_of(cap) == (CUDA, 0) and m.flags & IS_COPIED
        assert [m.dl_tensor.shape[i] for i in range(len(shape))] == shape
        assert m.dl_tensor.byte_offset == 0
        assert [c["bytes"] for c in drv.calls("cuMemAlloc_v2")] == ["1"], drv.log()
        assert drv.count("cuMemcpyHtoD_v2") == 0, drv.log()
        del cap, t
    dropped()


def case_empty_views_copy_zero_bytes_device_to_host_and_device():
    buf = np.zeros(16, np.uint8)
    drv.register(buf)
    for shape, strides in EMPTY:
        p = CtypesProducer(buf, dtype=(1, 8, 1), shape=shape, strides=strides, device=(CUDA, 0))
        t = godlpack.from_dlpack(p)
        drv.reset()
        host = godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0)))
        assert host.device == (CPU, 0) and host.shape == tuple(shape) and host.is_copied
        assert host.tolist() == np.empty(shape).tolist()
        same = godlpack.from_dlpack(t, copy=True)
        assert same.device == (CUDA, 0) and same.shape == tuple(shape) and same.is_copied
        cap = t.__dlpack__(max_version=(1, 3), copy=True)
        assert device_of(cap) == (CUDA, 0) and read_versioned(cap).dl_tensor.byte_offset == 0
        assert drv.count("cuMemcpyDtoHAsync_v2") == drv.count("cuMemcpyDtoDAsync_v2") == 0, drv.log()
        assert drv.violations() == 0, drv.log()
        del host, same, cap, t, p
    drv.unregister(buf)
    dropped()


def case_strided_views_copy_the_right_values():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    views = [base[::-1], base[:, ::-2], base.T, base[1:3, 5:0:-2], base[::-2, ::3].T]
    for v in views:
        p = CtypesProducer(v, device=(CUDA, 0))
        drv.register(base)
        t = godlpack.from_dlpack(p)
        host = godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0)))
        assert host.tolist() == v.tolist() and host.device == (CPU, 0)
        dev = godlpack.from_dlpack(t, copy=True)
        assert dev.device == (CUDA, 0) and dev.data_ptr != t.data_ptr
        back = godlpack.from_dlpack(dev.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0)))
        assert back.tolist() == v.tolist()
        up = godlpack.from_dlpack(godlpack.from_dlpack(v).__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0)))
        assert up.device == (CUDA, 0)
        assert godlpack.from_dlpack(up.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))).tolist() == v.tolist()
        del p, t, host, dev, back, up
        drv.unregister(base)
    assert drv.violations() == 0, drv.log()
    dropped()


# --- item 11: streams, syncs and contexts ----------------------------------------------

def case_dlpack_stream_none_waits_for_the_tensors_stream():
    a = np.arange(6.0)
    _, t = gpu(a, stream=S5)  # data ready on stream S5
    drv.reset()
    cap = t.__dlpack__(max_version=(1, 3))  # consumer on the legacy default stream
    rec, wait = drv.calls("cuEventRecord"), drv.calls("cuStreamWaitEvent")
    assert [c["stream"] for c in rec] == [str(S5)] and [c["stream"] for c in wait] == ["1"], drv.log()
    assert rec[0]["ev"] == wait[0]["ev"]
    del cap, t
    drv.unregister(a)
    dropped()


class _CAPI(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("size", ctypes.c_uint32), ("api_version", DLPackVersion),
                ("max_import_major", ctypes.c_uint32), ("free_managed", ctypes.c_void_p),
                ("free_managed_versioned", ctypes.c_void_p), ("is_cpu_accessible", ctypes.c_void_p),
                ("managed_from_object", ctypes.c_void_p)]


def _capi_managed_from_object():
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    table = _CAPI.from_address(get(godlpack._C_API, b"godlpack._C_API"))
    fn = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.py_object, DLPackVersion,
                           ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int))(table.managed_from_object)
    free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(table.free_managed_versioned)
    return fn, free


def case_c_api_fast_path_synchronises_like_dlpack_stream_none():
    managed_from_object, free = _capi_managed_from_object()
    a = np.arange(6.0)
    _, t = gpu(a, stream=S5)
    out, versioned = ctypes.c_void_p(), ctypes.c_int()
    drv.reset()
    assert managed_from_object(t, None, DLPackVersion(1, 3), ctypes.byref(out), ctypes.byref(versioned)) == 0
    assert out.value and versioned.value == 1
    rec, wait = drv.calls("cuEventRecord"), drv.calls("cuStreamWaitEvent")
    assert [c["stream"] for c in rec] == [str(S5)] and [c["stream"] for c in wait] == ["1"], drv.log()
    free(out)
    # Refusals come out as BufferError through the C API too.
    drv.fail("cuStreamWaitEvent")
    try:
        managed_from_object(t, None, DLPackVersion(1, 3), ctypes.byref(out), ctypes.byref(versioned))
    except BufferError as e:
        assert "fakecuda error 999" in str(e)
    else:
        raise AssertionError("a failed stream wait went unnoticed")
    del t
    drv.unregister(a)
    dropped()


def case_copy_true_on_cuda_is_ordered_before_the_consumers_stream():
    a = np.arange(6.0)
    _, t = gpu(a)
    drv.reset()
    cap = t.__dlpack__(max_version=(1, 3), copy=True, stream=S5)
    assert device_of(cap) == (CUDA, 0) and read_versioned(cap).flags & IS_COPIED
    names = drv.names()
    after = between(names, "cuMemcpyDtoDAsync_v2", "cuStreamWaitEvent")
    assert "cuEventRecord" in after, drv.log()
    rec, wait = drv.calls("cuEventRecord")[-1], drv.calls("cuStreamWaitEvent")[-1]
    assert rec["stream"] == "1" and wait["stream"] == str(S5) and rec["ev"] == wait["ev"], drv.log()
    # Copied to a CUDA device from the host: the same ordering.
    drv.reset()
    up = godlpack.arange(4).__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0), stream=S7)
    assert [c["stream"] for c in drv.calls("cuStreamWaitEvent")] == [str(S7)], drv.log()
    del cap, up, t
    drv.unregister(a)
    dropped()


def case_managed_memory_is_synchronised_before_the_host_reads_it():
    a = np.arange(6.0)
    _, t = gpu(a, device=(CUDA_MANAGED, 0), stream=S5)
    reads = {
        "tolist": lambda: t.tolist(),
        "memoryview": lambda: memoryview(t).tolist(),
        "numpy": lambda: np.asarray(t).tolist(),
        "from_dlpack copy": lambda: godlpack.from_dlpack(t, copy=True).tolist(),
        "dlpack copy": lambda: godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), copy=True)).tolist(),
        "to cpu": lambda: godlpack.from_dlpack(t, device=(CPU, 0)).tolist(),
        "dlpack to cpu": lambda: godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))).tolist(),
        "copy to cpu": lambda: godlpack.from_dlpack(t, device=(CPU, 0), copy=True).tolist(),
        "dlpack copy to cpu": lambda: godlpack.from_dlpack(
            t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0), copy=True)).tolist(),
    }
    for what, read in reads.items():
        drv.reset()
        assert read() == a.tolist(), what
        assert [c["stream"] for c in drv.calls("cuStreamSynchronize")][:1] == [str(S5)], (what, drv.log())
    del t, reads
    gc.collect()
    # Taken with stream=-1: the caller synchronises, godlpack does not.
    _, u = gpu(a, device=(CUDA_MANAGED, 0), stream=-1)
    drv.reset()
    assert u.tolist() == a.tolist() and drv.count("cuStreamSynchronize") == 0, drv.log()
    del u
    drv.unregister(a)
    dropped()


def case_copies_of_host_and_managed_memory_stay_on_their_device():
    a = np.arange(6.0).reshape(2, 3)
    kinds = {CUDA_HOST: ("cuMemHostAlloc", "cuMemFreeHost"), CUDA_MANAGED: ("cuMemAllocManaged", "cuMemFree_v2")}
    for dev, (alloc, free) in kinds.items():
        _, t = gpu(a, device=(dev, 0))
        drv.reset()
        c = godlpack.from_dlpack(t, copy=True)
        assert c.device == (dev, 0) and c.is_copied and c.tolist() == a.tolist(), (dev, c.device)
        assert c.data_ptr != t.data_ptr
        cap = t.__dlpack__(max_version=(1, 3), copy=True)
        assert device_of(cap) == (dev, 0) and read_versioned(cap).flags & IS_COPIED
        assert godlpack.from_dlpack(cap).tolist() == a.tolist()
        m = godlpack.from_dlpack(CtypesProducer(a, device=(dev, 0)), copy=True)  # a foreign producer
        assert m.device == (dev, 0) and m.is_copied
        assert drv.count(alloc) == 3, drv.log()
        # Asked for on the CPU, the copy is CPU memory.
        h = godlpack.from_dlpack(t, device=(CPU, 0), copy=True)
        hc = godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0), copy=True))
        assert h.device == hc.device == (CPU, 0) and h.is_copied and hc.is_copied and drv.count(alloc) == 3
        assert h.tolist() == hc.tolist() == a.tolist()
        del c, cap, m, h, hc
        gc.collect()
        assert drv.count(free) == 3 and drv.live_allocs() == 0, drv.log()
        del t
        drv.unregister(a)
    dropped()


def case_primary_context_retains_and_releases_balance():
    a = np.arange(6.0)
    _, t = gpu(a, stream=S5)
    for _ in range(3):
        t.__dlpack__(max_version=(1, 3), stream=S9)
    assert drv.retained(0) == 0 and drv.depth() == 0, drv.log()
    copies = [godlpack.from_dlpack(t, copy=True) for _ in range(3)]
    assert drv.retained(0) == 3, drv.log()  # each allocation keeps its context alive
    host = godlpack.from_dlpack(copies[0].__dlpack__(max_version=(1, 3), dl_device=(CPU, 0)))
    assert drv.retained(0) == 3
    del copies
    gc.collect()
    assert drv.retained(0) == 3, drv.log()  # their blocks are kept for reuse, with their context
    _godlpack._cuda_trim()
    assert drv.retained(0) == 0, drv.log()
    assert drv.count("cuDevicePrimaryCtxRetain") == drv.count("cuDevicePrimaryCtxRelease_v2") > 0
    del t, host
    drv.unregister(a)
    dropped()


def case_device_ids_select_the_device():
    a = np.arange(6.0)
    _, t = gpu(a, device=(CUDA, 1), stream=S5)
    drv.reset()
    c = godlpack.from_dlpack(t, copy=True)
    assert c.device == (CUDA, 1)
    assert {x["dev"] for x in drv.calls("cuDevicePrimaryCtxRetain")} == {"1"}, drv.log()
    assert drv.retained(1) == 1 and drv.retained(0) == 0
    del c, t
    drv.unregister(a)
    dropped()


def case_streams_that_need_no_synchronisation_make_no_driver_calls():
    a = np.arange(6.0)
    _, t = gpu(a)  # on the legacy default stream
    drv.reset()
    for s in (None, 1, -1):
        cap = t.__dlpack__(max_version=(1, 3), stream=s)
        assert read_versioned(cap).dl_tensor.data == a.ctypes.data
    _, u = gpu(a, stream=-1)  # taken without synchronising
    cap = u.__dlpack__(max_version=(1, 3), stream=S5)
    assert capsule_name(cap) == "dltensor_versioned"
    assert godlpack.from_dlpack(u, stream=S7).device == (CUDA, 0)
    assert drv.calls() == [], drv.log()
    del t, u, cap
    drv.unregister(a)
    dropped()


def case_export_to_another_stream_records_and_waits():
    a = np.arange(6.0)
    _, t = gpu(a)
    assert _godlpack.cuda_status()[0]  # loads the driver: cuInit is not logged below
    drv.reset()
    cap = t.__dlpack__(max_version=(1, 3), stream=2)
    assert read_versioned(cap).dl_tensor.data == a.ctypes.data
    assert drv.names() == ["cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxPushCurrent_v2", "cuEventCreate",
                           "cuEventRecord", "cuStreamWaitEvent", "cuEventDestroy_v2", "cuCtxPopCurrent_v2",
                           "cuDevicePrimaryCtxRelease_v2"], drv.log()
    assert drv.calls("cuEventRecord")[0]["stream"] == "1" and drv.calls("cuStreamWaitEvent")[0]["stream"] == "2"
    # A tensor taken on stream 5 hands it to the next consumer.
    u = godlpack.from_dlpack(t, stream=S5)
    drv.reset()
    u.__dlpack__(max_version=(1, 3), stream=S6)
    assert drv.calls("cuEventRecord")[0]["stream"] == str(S5) and drv.calls("cuStreamWaitEvent")[0]["stream"] == str(S6)
    del t, u, cap
    drv.unregister(a)
    dropped()


def case_driver_failures_are_buffer_errors_and_leak_nothing():
    a = np.arange(6.0)
    _, t = gpu(a)
    failures = [
        ("cuMemcpyDtoHAsync_v2", lambda: t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))),
        ("cuMemcpyDtoDAsync_v2", lambda: godlpack.from_dlpack(t, copy=True)),
        ("cuMemAlloc_v2", lambda: t.__dlpack__(max_version=(1, 3), copy=True)),
        ("cuMemcpyHtoD_v2", lambda: godlpack.arange(3).__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0))),
        ("cuStreamWaitEvent", lambda: t.__dlpack__(max_version=(1, 3), stream=2)),
        ("cuEventRecord", lambda: t.__dlpack__(max_version=(1, 3), stream=2)),
        ("cuEventCreate", lambda: t.__dlpack__(max_version=(1, 3), stream=2)),
        ("cuStreamSynchronize", lambda: t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))),
        ("cuCtxPushCurrent_v2", lambda: t.__dlpack__(max_version=(1, 3), stream=2)),
        ("cuDevicePrimaryCtxRetain", lambda: godlpack.from_dlpack(t, copy=True)),
    ]
    for name, call in failures:
        drv.fail(name)
        try:
            call()
        except BufferError as e:
            assert "fakecuda error 999" in str(e), (name, e)
        else:
            raise AssertionError(f"a failing {name} went unnoticed")
        gc.collect()
        _godlpack._cuda_trim()  # a block kept for reuse holds its context
        assert _godlpack._live() == (1, 0), (name, _godlpack._live())
        assert drv.depth() == 0 and drv.retained(0) == 0 and drv.live_events() == 0, (name, drv.log())
        assert drv.live_allocs() == 0, (name, drv.log())
    _, m = gpu(a, device=(CUDA_MANAGED, 0), stream=S5)
    drv.fail("cuStreamSynchronize")
    try:
        m.tolist()
    except BufferError as e:
        assert "fakecuda error 999" in str(e)
    else:
        raise AssertionError("a failing host sync went unnoticed")
    del t, m
    drv.unregister(a)
    dropped()


def case_a_device_the_driver_lacks_is_a_buffer_error():
    a = np.arange(6.0)
    _, t = gpu(a, device=(CUDA, 3))  # the stand-in has devices 0 and 1
    try:
        t.__dlpack__(max_version=(1, 3), stream=2)
    except BufferError as e:
        assert "context setup" in str(e)
    else:
        raise AssertionError("device 3 accepted")
    del t
    drv.unregister(a)
    dropped()


def case_copies_are_released_from_any_thread():
    a = np.arange(1000.0)
    _, t = gpu(a)
    copies = [godlpack.from_dlpack(t, copy=True) for _ in range(8)]
    caps = [c.__dlpack__(max_version=(1, 3)) for c in copies]
    del copies
    errors = []
    set_name = ctypes.pythonapi.PyCapsule_SetName
    set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]

    def work(cap):
        try:
            m = capsule_pointer(cap)
            set_name(cap, b"used_dltensor_versioned")
            # The deleter runs here, on this thread, after the Tensor copies are gone.
            deleter = DLManagedTensorVersioned.from_address(m).deleter
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(deleter)(m)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in caps]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    del caps, t
    drv.unregister(a)
    dropped()


def case_the_driver_failing_to_start_says_why():
    # FAKECUDA_INIT_RESULT=100 is set for this case by tests/runtime/test_fakecuda.py.
    ok, why = _godlpack.cuda_status()
    assert not ok and "cuInit failed with CUDA error 100" in why, why
    t = godlpack.arange(3)
    try:
        t.__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0))
    except BufferError as e:
        assert "cuInit failed" in str(e)
    else:
        raise AssertionError("copied to a GPU without a driver")

