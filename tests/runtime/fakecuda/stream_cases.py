"""Cases where data is ready on one stream and read on another, and where
from_dlpack moves data between the host and a GPU, run against the
asynchronous stand-in driver: device work lands only when something waits for
it, so a missing handshake reads stale bytes instead of passing by luck.

Producers here behave as the GPU libraries do: ``TorchLike`` as PyTorch's
``__dlpack__`` (no stream given means -1, "no synchronisation"; its data is
ready on its current stream), ``TableProducer`` as PyTorch >= 2.10 with its C
exchange table (``current_work_stream`` names its current stream). Their
current streams are non-blocking, as PyTorch's pool streams are: they do not
wait for the legacy default stream, nor it for them. Run by
tests/runtime/test_fakecuda.py, each case in a process of its own.
"""
from __future__ import annotations

import ctypes

import numpy as np

import godlpack
from ctypes_producer import DLPackVersion, CtypesProducer, capsule_pointer, read_versioned
from fakecuda.cases import CPU, CUDA, CUDA_MANAGED, dropped, drv
from godlpack import _probe

LEGACY = 1


def device_array(values) -> np.ndarray:
    """Zeroed host memory standing in for device memory, and the bytes a
    producer's kernel will write there."""
    a = np.zeros_like(values)
    drv.register(a)
    return a


class TorchLike:
    """A CUDA producer with PyTorch's __dlpack__ stream rules."""

    def __init__(self, array: np.ndarray, current: int, **kw) -> None:
        self.p = CtypesProducer(array, device=(CUDA, 0), **kw)
        self.current = current
        self.streams: list = []

    def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        if stream != -1:
            target = LEGACY if stream in (None, 1) else stream
            if target != self.current:
                drv.wait_stream(target, self.current)  # event on current, target waits
        return self.p.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return (CUDA, 0)


# A DLPack 1.3 exchange table made with ctypes.
ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
TO_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
DLTENSOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class ExchangeAPI(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p), ("alloc", ALLOC), ("from_py", FROM_PY),
                ("to_py", TO_PY), ("dltensor", DLTENSOR), ("current_work_stream", STREAM)]


_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


class TableProducer(TorchLike):
    """TorchLike with a C exchange table whose current_work_stream is the
    producer's current stream (the class attribute `current`)."""

    current_stream = LEGACY
    calls = {"from_py": 0, "stream": 0}

    @staticmethod
    def _from_py(obj, out):
        self = ctypes.cast(obj, ctypes.py_object).value
        TableProducer.calls["from_py"] += 1
        cap = self.p.capsule(True)
        _set_name(cap, b"used_dltensor_versioned")
        out[0] = capsule_pointer(cap)
        return 0

    @staticmethod
    def _stream(device_type, device_id, out):
        TableProducer.calls["stream"] += 1
        out[0] = None if TableProducer.current_stream == 0 else TableProducer.current_stream
        return 0

    _keep = (ALLOC(lambda *a: -1), FROM_PY(_from_py.__func__), TO_PY(lambda *a: -1), STREAM(_stream.__func__))
    _table = ExchangeAPI(DLPackVersion(1, 3), None, _keep[0], _keep[1], _keep[2], DLTENSOR(), _keep[3])
    _name = ctypes.create_string_buffer(b"dlpack_exchange_api")  # the capsule keeps a pointer to it
    __dlpack_c_exchange_api__ = _new_capsule(ctypes.addressof(_table), ctypes.addressof(_name), None)


VALUES = np.arange(1, 1001, dtype=np.float64)


def written_on_a_stream():
    """Device memory that a producer's kernel on s1 (non-blocking) is still
    writing VALUES to, s1, and another non-blocking stream for a consumer."""
    a = device_array(VALUES)
    s1, s2 = drv.stream(non_blocking=True), drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, VALUES.tobytes())
    return a, s1, s2


def read_on(stream: int, t) -> np.ndarray:
    """What a kernel on stream reads from a (stand-in) CUDA tensor."""
    return np.frombuffer(drv.read_on(stream, t.data_ptr, t.nbytes), dtype=np.float64)


# --- item 1: the stream the data is ready on -----------------------------------

def case_a_producer_defaulting_to_no_sync_is_read_right_on_another_stream():
    a = device_array(VALUES)
    s1, s2 = drv.stream(non_blocking=True), drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, VALUES.tobytes())  # the producer's kernel, still queued
    x = TorchLike(a, current=s1)
    t = godlpack.from_dlpack(x)
    cap = t.__dlpack__(max_version=(1, 3), stream=s2)  # a consumer on s2
    assert np.array_equal(read_on(s2, t), VALUES), f"the consumer on s2 read stale data ({x.streams})"
    # PyTorch's default (-1) leaves the data ready on s1 only: godlpack asks
    # for a stream it then knows (None: the legacy stream).
    assert x.streams == [None], x.streams
    del cap, t, x
    drv.unregister(a)
    dropped()


def case_a_producers_exchange_table_stream_is_the_tensors_stream():
    a, s1, s2 = written_on_a_stream()
    x = TableProducer(a, current=s1)
    TableProducer.current_stream = s1
    t = godlpack.from_dlpack(x)
    assert TableProducer.calls == {"from_py": 1, "stream": 1}, TableProducer.calls
    assert x.streams == [], f"__dlpack__ was called too: {x.streams}"  # the table is the cheap path
    cap = t.__dlpack__(max_version=(1, 3), stream=s2)
    assert np.array_equal(read_on(s2, t), VALUES), "the consumer on s2 read stale data"
    # torch's default stream is NULL from the table: the legacy stream.
    b = device_array(VALUES)
    drv.write_on(LEGACY, b.ctypes.data, VALUES.tobytes())
    TableProducer.current_stream = 0
    u = godlpack.from_dlpack(TableProducer(b, current=LEGACY))
    drv.reset()
    cap2 = u.__dlpack__(max_version=(1, 3), stream=s2)
    assert [c["stream"] for c in drv.calls("cuEventRecord")] == ["1"], drv.log()
    assert np.array_equal(read_on(s2, u), VALUES)
    del cap, cap2, t, u, x
    drv.unregister(a)
    drv.unregister(b)
    dropped()


def case_godlpacks_exchange_table_hands_data_ready_where_it_says():
    """A consumer of godlpack's own table (tvm-ffi) asks current_work_stream,
    gets NULL (the legacy stream), and reads there."""
    a, s1, s2 = written_on_a_stream()
    t = godlpack.from_dlpack(TorchLike(a, current=s1), stream=s1)  # ready on s1
    cap = _probe.exchange_export(godlpack.Tensor.__dlpack_c_exchange_api__, t)
    assert read_versioned(cap).dl_tensor.data == a.ctypes.data
    drv.wait_stream(s2, LEGACY)  # the consumer: its stream waits for the one the table names
    assert np.array_equal(read_on(s2, t), VALUES), "the table's consumer read stale data"
    del cap, t
    drv.unregister(a)
    dropped()


def case_a_raw_capsule_takes_the_stream_it_is_ready_on():
    a, s1, s2 = written_on_a_stream()
    p = CtypesProducer(a, device=(CUDA, 0))
    t = godlpack.from_dlpack(p.capsule(True), stream=s1)  # the caller says where it is ready
    cap = t.__dlpack__(max_version=(1, 3), stream=s2)
    assert np.array_equal(read_on(s2, t), VALUES), "the consumer on s2 read stale data"
    del cap, t
    drv.unregister(a)
    dropped()


# --- item 2: from_dlpack moves data between the host and a GPU -----------------

def _views():
    base = np.arange(1, 49, dtype=np.float64).reshape(6, 8)
    return [base, base[::-1, 1::3], base.T, base[2:2], np.full((), 7.5), base[:, 3],
            np.arange(12, dtype=np.int8).reshape(3, 4)[:, ::-2], np.arange(6, dtype=np.complex64) * 1j,
            np.array([True, False, True])]


def case_from_dlpack_copies_a_cuda_tensor_to_the_host():
    for v in _views():
        dev = device_array(np.ascontiguousarray(v).reshape(-1) if v.size else np.zeros(1, v.dtype))
        s1 = drv.stream(non_blocking=True)
        src = np.ascontiguousarray(v)
        drv.write_on(s1, dev.ctypes.data, src.tobytes())
        t = godlpack.from_dlpack(CtypesProducer(dev[:v.size].reshape(v.shape), device=(CUDA, 0)), stream=s1)
        h = godlpack.from_dlpack(t, device=(CPU, 0))
        assert h.device == (CPU, 0) and h.is_copied and h.shape == v.shape, (v, h.device, h.shape)
        assert np.array_equal(np.asarray(h), v), (v, np.asarray(h))
        h2 = godlpack.from_dlpack(t, device=(CPU, 0), copy=True)
        assert np.array_equal(np.asarray(h2), v)
        try:
            godlpack.from_dlpack(t, device=(CPU, 0), copy=False)
        except BufferError as e:
            assert "copy" in str(e), e
        else:
            raise AssertionError("copy=False moved a tensor")
        del t, h, h2
        drv.unregister(dev)
    dropped()


def case_from_dlpack_copies_host_arrays_to_the_gpu():
    for v in _views():
        t = godlpack.from_dlpack(v, device=(CUDA, 0))  # NumPy refuses the device: godlpack copies
        assert t.device == (CUDA, 0) and t.is_copied and t.shape == v.shape and t.dtype == str(v.dtype)
        back = godlpack.from_dlpack(t, device=(CPU, 0))
        assert np.array_equal(np.asarray(back), v), (v, np.asarray(back))
        # A consumer on another stream sees it too.
        s2 = drv.stream(non_blocking=True)
        cap = t.__dlpack__(max_version=(1, 3), stream=s2)
        m = read_versioned(cap).dl_tensor
        assert m.device.device_type == CUDA
        n = t.nbytes
        start = t.data_ptr  # compact or not, the copy keeps the view's layout over its byte span
        if n and t.is_contiguous:
            assert drv.read_on(s2, start, n) == np.ascontiguousarray(v).tobytes()
        try:
            godlpack.from_dlpack(v, device=(CUDA, 0), copy=False)
        except BufferError:
            pass
        else:
            raise AssertionError("copy=False moved an array")
        g = godlpack.from_dlpack(godlpack.from_dlpack(v), device=(CUDA, 0))  # a godlpack tensor too
        assert g.device == (CUDA, 0) and np.array_equal(np.asarray(godlpack.from_dlpack(g, device=(CPU, 0))), v)
        del t, back, cap, g
    dropped()


def case_a_producer_ignoring_dl_device_gets_copied_by_godlpack():
    a = device_array(VALUES)
    s1 = drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, VALUES.tobytes())
    x = TorchLike(a, current=s1)  # ignores dl_device, like a legacy producer
    h = godlpack.from_dlpack(x, device=(CPU, 0))
    assert h.device == (CPU, 0) and np.array_equal(np.asarray(h), VALUES)
    try:
        godlpack.from_dlpack(x, device=(CPU, 0), copy=False)
    except BufferError:
        pass
    else:
        raise AssertionError("copy=False moved a tensor")
    del h, x
    drv.unregister(a)
    dropped()


def case_managed_memory_moves_to_the_host_after_its_stream():
    a = device_array(VALUES)
    s1 = drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, VALUES.tobytes())
    t = godlpack.from_dlpack(CtypesProducer(a, device=(CUDA_MANAGED, 0)), stream=s1)
    h = godlpack.from_dlpack(t, device=(CPU, 0))
    assert h.device == (CPU, 0) and np.array_equal(np.asarray(h), VALUES)
    del t, h
    drv.unregister(a)
    dropped()


# --- item 6: large host transfers go through pinned memory -----------------------

def case_large_copies_to_the_host_land_in_pinned_memory_kept_for_reuse():
    big = np.arange(3 << 17, dtype=np.float64)  # 3 MiB
    a = device_array(big)
    s1 = drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, big.tobytes())
    t = godlpack.from_dlpack(CtypesProducer(a, device=(CUDA, 0)), stream=s1)
    drv.reset()
    h = godlpack.from_dlpack(t, device=(CPU, 0))
    assert h.device == (CPU, 0) and np.array_equal(np.asarray(h), big), "stale or wrong host copy"
    assert drv.count("cuMemHostAlloc") == 1, drv.log()
    assert [c["stream"] for c in drv.calls("cuMemcpyDtoHAsync_v2")] == [str(s1)], drv.log()
    del h
    for copy in (lambda: godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))),
                 lambda: godlpack.from_dlpack(t, device=(CPU, 0), copy=True)):
        c = copy()
        assert np.array_equal(np.asarray(c), big)
        del c
    assert drv.count("cuMemHostAlloc") == 1, f"the pinned block was not reused\n{drv.log()}"
    rev = godlpack.from_dlpack(CtypesProducer(a[::-2], device=(CUDA, 0)), stream=s1)
    assert np.array_equal(np.asarray(godlpack.from_dlpack(rev, device=(CPU, 0))), big[::-2])
    small = godlpack.from_dlpack(CtypesProducer(a[:1000], device=(CUDA, 0)), stream=s1)
    drv.reset()
    assert np.array_equal(np.asarray(godlpack.from_dlpack(small, device=(CPU, 0))), big[:1000])
    assert drv.count("cuMemHostAlloc") == 0, "a small copy was pinned"
    del t, rev, small
    drv.unregister(a)
    dropped()


def case_large_copies_to_the_gpu_are_staged_through_two_pinned_chunks():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((20 << 20) // 8 + 3)  # 20 MiB and a bit: three 8 MiB chunks
    want = v.tobytes()
    drv.reset()
    t = godlpack.from_dlpack(v, device=(CUDA, 0))
    v[:] = 0  # the copy is done on return: the source may change
    assert drv.count("cuMemcpyHtoDAsync_v2") == 3 and drv.count("cuMemHostAlloc") == 2, drv.log()
    s2 = drv.stream(non_blocking=True)
    cap = t.__dlpack__(max_version=(1, 3), stream=s2)
    assert drv.read_on(s2, t.data_ptr, t.nbytes) == want, "the staged copy lost or reordered a chunk"
    drv.reset()
    u = godlpack.from_dlpack(godlpack.from_dlpack(np.frombuffer(want)), device=(CUDA, 0))
    assert drv.count("cuMemHostAlloc") == 0, f"the staging chunks were not reused\n{drv.log()}"
    assert drv.read_on(1, u.data_ptr, u.nbytes) == want
    for name, skip in (("cuMemcpyHtoDAsync_v2", 1), ("cuEventSynchronize", 0), ("cuEventRecord", 2)):
        drv.fail(name, skip=skip)
        try:
            godlpack.from_dlpack(np.frombuffer(want), device=(CUDA, 0))
        except BufferError as e:
            assert "fakecuda error 999" in str(e), (name, e)
        else:
            raise AssertionError(f"a failing {name} went unnoticed")
        assert drv.depth() == 0 and drv.live_events() == 0, (name, drv.log())
    del t, u, cap
    dropped()


# --- item 6: device memory kept for reuse ------------------------------------------

def case_device_copies_reuse_their_memory_only_after_queued_readers_ran():
    """A consumer's kernel on its own non-blocking stream, still queued, reads
    a godlpack copy that is then released; the next copy of that size gets
    the same block. Its reader must still see the first copy's bytes: the
    block is reused only once everything queued in the context has run."""
    first, second = np.arange(1, 257, dtype=np.float64), np.arange(1001, 1257, dtype=np.float64)
    t = godlpack.from_dlpack(first, device=(CUDA, 0))
    s2 = drv.stream(non_blocking=True)
    cap = t.__dlpack__(max_version=(1, 3), stream=s2)  # the consumer on s2
    out = device_array(np.zeros_like(first))
    drv.copy_on(s2, out.ctypes.data, t.data_ptr, t.nbytes)  # its kernel, still queued
    drv.reset()
    del cap, t  # released with the consumer's kernel still queued
    u = godlpack.from_dlpack(second, device=(CUDA, 0))
    assert drv.count("cuMemAlloc_v2") == 0 and drv.count("cuMemFree_v2") == 0, f"no reuse\n{drv.log()}"
    assert np.array_equal(np.asarray(godlpack.from_dlpack(u, device=(CPU, 0))), second)
    got = np.frombuffer(drv.read_on(s2, out.ctypes.data, out.nbytes), dtype=np.float64)
    assert np.array_equal(got, first), "the consumer's queued kernel read the block's next contents"
    assert drv.count("cuCtxSynchronize") == 1, drv.log()  # the release waited for the context
    # Kept blocks hold their context; trimming frees them (dropped() checks).
    del u
    assert drv.retained(0) == 1 and drv.live_allocs() == 1, drv.log()  # the kept block
    drv.unregister(out)
    dropped()


def case_device_to_device_copies_reuse_a_kept_block():
    a = device_array(VALUES)
    s1 = drv.stream(non_blocking=True)
    drv.write_on(s1, a.ctypes.data, VALUES.tobytes())
    t = godlpack.from_dlpack(CtypesProducer(a, device=(CUDA, 0)), stream=s1)
    drv.reset()
    for _ in range(3):
        c = godlpack.from_dlpack(t, copy=True)
        assert np.array_equal(np.frombuffer(drv.read_on(s1, c.data_ptr, c.nbytes)), VALUES)
        del c
    assert drv.count("cuMemAlloc_v2") == 1 and drv.count("cuMemFree_v2") == 0, drv.log()
    assert [c["stream"] for c in drv.calls("cuMemcpyDtoDAsync_v2")] == [str(s1)] * 3, drv.log()
    # A smaller copy does not take a block more than twice its size.
    small = godlpack.from_dlpack(CtypesProducer(a[:100], device=(CUDA, 0)), stream=s1)
    drv.reset()
    d = godlpack.from_dlpack(small, copy=True)
    assert drv.count("cuMemAlloc_v2") == 1, drv.log()
    del d, small, t
    drv.unregister(a)
    dropped()
