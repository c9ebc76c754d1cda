"""Pickling and copying godlpack.Tensor (internal/cpython/exchange/pickle.c): every protocol and
dtype, zero-copy out-of-band buffers with protocol 5 (out: a PickleBuffer over
the tensor's memory; in: the received buffer kept as the memory when it is
writable and aligned), logical contents of strided views, the read-only flag,
copy.copy/deepcopy copying, and crafted pickles refused with clear errors."""
from __future__ import annotations

import copy
import ctypes
import gc
import pickle
import sys

import numpy as np
import pytest

import godlpack
from godlpack import _godlpack
from godlpack._tables import DTYPES
from ctypes_producer import READ_ONLY, CtypesProducer

REBUILD = _godlpack._rebuild_tensor


def roundtrip(t, protocol=5, out_of_band=True):
    bufs = []
    s = pickle.dumps(t, protocol=protocol, buffer_callback=bufs.append if out_of_band and protocol >= 5 else None)
    return pickle.loads(s, buffers=bufs), bufs


def raw(t) -> bytes:
    """The bytes of a compact tensor (any dtype), through a uint8 view of its memory."""
    return ctypes.string_at(t.data_ptr, t.nbytes)


def same(a, b):
    assert (a.dtype, a.shape, a.strides, a.readonly, a.device) == (b.dtype, b.shape, b.strides, b.readonly, b.device)
    assert raw(a) == raw(b)


# --- every dtype, every protocol ---------------------------------------------

def _made(name):
    if name == "float8_e8m0fnu":  # no zero: empty, then filled below
        t = godlpack.empty((2, 3), name)
    else:
        t = godlpack.zeros((2, 3), name)
    if t.nbytes:
        ctypes.memmove(t.data_ptr, bytes(range(1, t.nbytes + 1)), t.nbytes)
    return t


@pytest.mark.parametrize("name", [d[0] for d in DTYPES])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_dtype_survives_every_protocol(name, protocol):
    t = _made(name)
    u = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert type(u) is godlpack.Tensor
    same(t, u)
    assert u.data_ptr != t.data_ptr


@pytest.mark.parametrize("dtype,arr", [((17, 4, 2), np.arange(12, dtype=np.uint8)),
                                       ((2, 32, 4), np.arange(48, dtype=np.float32)),
                                       ((15, 6, 4), np.arange(36, dtype=np.uint8))])
def test_vector_dtypes_survive(dtype, arr):
    t = godlpack.from_dlpack(CtypesProducer(arr, dtype=dtype, shape=[3, 4], strides=[4, 1]))
    for protocol in (2, 5):
        u, _ = roundtrip(t, protocol)
        same(t, u)


def test_zero_d_and_empty_tensors():
    for t in (godlpack.full((), 2.5, "float64"), godlpack.zeros((0, 3), "float32"), godlpack.zeros((4, 0), "int8")):
        for protocol in (0, 4, 5):
            u, _ = roundtrip(t, protocol)
            same(t, u)


# --- zero-copy out and in ---------------------------------------------------

def test_protocol_5_passes_the_tensors_own_memory_out_of_band():
    t = godlpack.arange(1 << 16, dtype="float64")  # Go memory
    bufs = []
    s = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == 1 and len(s) < 200
    m = bufs[0].raw()
    assert np.frombuffer(m, np.uint8).ctypes.data == t.data_ptr and m.nbytes == t.nbytes  # no copy out
    u = pickle.loads(s, buffers=bufs)
    assert u.data_ptr == t.data_ptr  # and none in: the buffer is kept as the memory
    del m


def test_a_received_writable_aligned_buffer_is_kept_not_copied():
    t = godlpack.arange(100, dtype="float64")
    s = pickle.dumps(t, protocol=5, buffer_callback=lambda b: False)
    frame = bytearray(raw(t))
    before = sys.getrefcount(frame)
    u = pickle.loads(s, buffers=[frame])
    assert u.data_ptr == np.frombuffer(frame, np.uint8).ctypes.data and not u.readonly
    assert sys.getrefcount(frame) == before + 1  # the tensor holds the buffer
    np.asarray(u)[0] = 42.0
    assert frame[:8] == np.float64(42.0).tobytes()
    del frame
    gc.collect()
    assert u.tolist()[:2] == [42.0, 1.0]  # the memory lives as long as u


def test_the_buffer_is_released_exactly_once():
    t = godlpack.arange(8, dtype="int64")
    frame = bytearray(raw(t))
    base = sys.getrefcount(frame)
    s = pickle.dumps(t, protocol=5, buffer_callback=lambda b: False)
    us = [pickle.loads(s, buffers=[frame]) for _ in range(3)]
    assert sys.getrefcount(frame) == base + 3
    with pytest.raises(BufferError):
        frame.append(0)  # exported: cannot resize under a tensor
    del us
    gc.collect()
    assert sys.getrefcount(frame) == base
    frame.append(0)


def test_read_only_or_misaligned_buffers_are_copied_once():
    t = godlpack.arange(16, dtype="float32")
    s = pickle.dumps(t, protocol=5, buffer_callback=lambda b: False)
    ro = bytes(raw(t))
    u = pickle.loads(s, buffers=[ro])  # a writable tensor cannot live in bytes
    assert not u.readonly and u.tolist() == t.tolist()
    assert u.data_ptr != np.frombuffer(ro, np.uint8).ctypes.data
    big = bytearray(t.nbytes + 1)
    mis = memoryview(big)[1:]
    mis[:] = raw(t)
    u = pickle.loads(s, buffers=[mis])
    assert u.data_ptr % 4 == 0 and u.tolist() == t.tolist()


def test_read_only_flag_survives_and_read_only_buffers_are_shared():
    arr = np.arange(6.0)
    arr.flags.writeable = False
    t = godlpack.from_dlpack(arr)
    assert t.readonly
    for protocol in (2, 5):
        u, _ = roundtrip(t, protocol, out_of_band=False)
        assert u.readonly and u.tolist() == arr.tolist()
    s = pickle.dumps(t, protocol=5, buffer_callback=lambda b: False)
    ro = bytes(arr.tobytes())
    u = pickle.loads(s, buffers=[ro])
    assert u.readonly and u.data_ptr == np.frombuffer(ro, np.uint8).ctypes.data  # shared, read-only
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(u)[0] = 1


# --- layouts ------------------------------------------------------------------

def test_a_strided_view_pickles_as_its_logical_contents():
    a = np.arange(24.0).reshape(4, 6)
    for view in (a[:, ::2], a[::-1], a[1:3, 2:5], np.broadcast_to(np.arange(3.0), (4, 3))):
        t = godlpack.from_dlpack(view)
        for protocol in (3, 5):
            u, _ = roundtrip(t, protocol)
            assert u.tolist() == view.tolist() and u.is_contiguous


def test_a_fortran_order_tensor_keeps_its_strides_without_a_copy():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    t = godlpack.from_dlpack(a)
    u, bufs = roundtrip(t)
    assert u.strides == t.strides == (1, 3) and u.tolist() == a.tolist()
    assert u.data_ptr == t.data_ptr


# --- copy and deepcopy -------------------------------------------------------

@pytest.mark.parametrize("fn", [copy.copy, copy.deepcopy])
def test_copy_and_deepcopy_copy_the_data(fn):
    t = godlpack.arange(6, dtype="int32")
    u = fn(t)
    assert type(u) is godlpack.Tensor and u.tolist() == t.tolist() and u.data_ptr != t.data_ptr
    np.asarray(u)[0] = 7
    assert t.tolist()[0] == 0
    arr = np.arange(4.0)
    arr.flags.writeable = False
    r = fn(godlpack.from_dlpack(arr))
    assert r.readonly and not r.is_copied and r.tolist() == arr.tolist()
    b = godlpack.zeros((2, 2), "bfloat16")
    assert fn(b).dtype == "bfloat16"


def test_deepcopy_of_a_container_keeps_identity():
    t = godlpack.arange(3)
    d = copy.deepcopy({"a": t, "b": t})
    assert d["a"] is d["b"] and d["a"] is not t


# --- crafted pickles ---------------------------------------------------------

GOOD = (1, bytearray(24), (2, 64, 1), (3,), "C", False, (1, 0))


def crafted(i, value):
    args = list(GOOD)
    args[i] = value
    return args


@pytest.mark.parametrize("args,exc,match", [
    (crafted(0, 2), ValueError, "pickle format 2"),
    (crafted(1, bytearray(23)), ValueError, "23 bytes.*need 24"),
    (crafted(1, bytearray(25)), ValueError, "25 bytes.*need 24"),
    (crafted(1, 12345), TypeError, "contiguous buffer"),
    (crafted(1, memoryview(bytearray(48))[::2]), TypeError, "contiguous buffer"),
    (crafted(2, (99, 64, 1)), ValueError, "unknown type code 99"),
    (crafted(2, (2, 63, 1)), ValueError, "unknown type code 2 with 63 bits"),
    (crafted(2, (2, 64, 0)), ValueError, "lanes 0 is out of range"),
    (crafted(2, (2, 64, 1 << 20)), ValueError, "lanes"),
    ([1, bytearray(5), (17, 4, 3), (3,), "C", False, (1, 0)], ValueError, "not whole bytes"),
    (crafted(2, (2, 64)), TypeError, "dtype must be"),
    (crafted(2, (-1, 64, 1)), ValueError, "dtype code -1"),
    (crafted(3, (-3,)), ValueError, "negative extent"),
    (crafted(3, (1 << 62, 1 << 62)), ValueError, "count overflows"),
    (crafted(3, (0, 1 << 62, 1 << 62)), ValueError, "count overflows"),
    (crafted(3, (1 << 61,)), ValueError, "bytes overflows"),
    (crafted(3, (1 << 70,)), OverflowError, "too big"),
    (crafted(3, (True, 3)), TypeError, "shape entries"),
    (crafted(3, [3]), ValueError, "shape must be a tuple"),
    (crafted(3, (1,) * 65), ValueError, "at most 64"),
    (crafted(4, "K"), ValueError, "order"),
    (crafted(5, 1), TypeError, "readonly"),
    (crafted(6, (4, 0)), ValueError, "device"),
    (crafted(6, (2, -1)), ValueError, "device"),
    (crafted(6, "cpu"), TypeError, "device"),
    (GOOD[:6], TypeError, "7 arguments"),
])
def test_crafted_arguments_are_refused_clearly(args, exc, match):
    with pytest.raises(exc, match=match):
        REBUILD(*args)


def test_a_crafted_pickle_stream_is_refused():
    t = godlpack.arange(4, dtype="int64")
    s = pickle.dumps(t, protocol=4)
    bad = s.replace(b"\x8c\x01C", b"\x8c\x01Q")  # the order string
    assert bad != s
    with pytest.raises(ValueError, match="order"):
        pickle.loads(bad)
    short = bytearray(pickle.dumps(t, protocol=5, buffer_callback=lambda b: False))
    with pytest.raises(ValueError, match="bytes"):
        pickle.loads(short, buffers=[bytearray(31)])


def test_rebuild_is_the_owning_modules_and_pickles_by_reference():
    assert REBUILD.__module__ == "godlpack._godlpack"
    fn, args = godlpack.zeros(2).__reduce_ex__(5)
    assert fn is REBUILD and isinstance(args[1], pickle.PickleBuffer)
    fn, args = godlpack.zeros(2).__reduce_ex__(2)
    assert isinstance(args[1], bytes)
    assert b"_rebuild_tensor" in pickle.dumps(godlpack.zeros(2))


# --- _rebuild_tensor fuzzed: a Tensor over exactly the bytes given, or a clear refusal -------------

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ints = st.one_of(st.integers(-3, 70), st.integers(-(2**64), 2**64), st.sampled_from([1 << 61, 1 << 62, 2**63 - 1]))
_dtypes = st.one_of(st.tuples(st.sampled_from([0, 1, 2, 4, 5, 6, 17, 99, -1]), st.sampled_from([1, 4, 8, 16, 32, 64, 7]),
                              st.sampled_from([1, 2, 4, 0, 1 << 20])),
                    st.tuples(_ints, _ints), st.just("float32"), st.none())
_shapes = st.one_of(st.lists(_ints, max_size=5).map(tuple), st.lists(st.integers(0, 4), max_size=3), st.just(True),
                    st.tuples(st.booleans()))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(1, bytes(range(24)), (2, 64, 1), (3,), "C", False, (1, 0))  # taken
@example(1, bytes(range(24)), (2, 64, 1), (4,), "C", False, (1, 0))  # 8 bytes short
@example(1, bytes(range(6)), (1, 8, 1), (2, 3), "F", True, (1, 0))  # taken, Fortran order
@given(version=st.sampled_from([1, 0, 2, -1, "1"]), data=st.one_of(st.binary(max_size=96), st.just(bytearray(8)),
                                                                  st.just(memoryview(b"\x00" * 16)), st.integers()),
       dtype=_dtypes, shape=_shapes, order=st.sampled_from(["C", "F", "K", "", 3]),
       readonly=st.sampled_from([False, True, 1, None]),
       device=st.one_of(st.just((1, 0)), st.tuples(st.integers(-2, 20), st.integers(-2, 3)), st.just("cpu")))
def test_rebuild_fuzzed_gives_the_bytes_or_a_clear_exception(version, data, dtype, shape, order, readonly, device):
    try:
        t = REBUILD(version, data, dtype, shape, order, readonly, device)
    except (ValueError, TypeError, OverflowError, BufferError, MemoryError):
        return
    # Taken: a CPU tensor over exactly those bytes, with that shape.
    assert isinstance(t, godlpack.Tensor) and t.shape == tuple(shape)
    assert t.nbytes == len(bytes(data)) and raw(t) == bytes(data)
