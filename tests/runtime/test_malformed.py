"""Malformed managed tensors from a ctypes producer: each is refused with a
BufferError that says what is wrong, and its deleter runs exactly once, right
away, before from_dlpack returns."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import godlpack
from ctypes_producer import IS_SUBBYTE_TYPE_PADDED, CtypesProducer

ctypes_u8 = ctypes.c_uint8


def _arr():
    return np.arange(12, dtype=np.float32).reshape(3, 4)


# (id, producer keywords, regex the message must match)
MALFORMED = [
    ("future-major-2", dict(version=(2, 0)), r"(?i)version.*2\.0|2\.0.*newer"),
    ("future-major-7", dict(version=(7, 1)), r"(?i)version"),
    ("versioned-major-0", dict(version=(0, 8)), r"(?i)version"),
    ("ndim-minus-1", dict(ndim=-1), r"ndim = -1"),
    ("ndim-65", dict(ndim=65, shape=[1] * 65, strides=[1] * 65), r"ndim = 65"),
    ("negative-shape", dict(shape=[3, -4], strides=[4, 1]), r"(?i)shape.*-4.*negative"),
    ("unknown-dtype-code", dict(dtype=(99, 32, 1)), r"(?i)dtype.*\b99\b"),
    ("float-bits-12", dict(dtype=(2, 12, 1)), r"(?i)dtype|type code"),
    ("bits-0", dict(dtype=(2, 0, 1)), r"(?i)0 bits|dtype"),
    ("lanes-3-of-fp4", dict(dtype=(17, 4, 3)), r"(?i)\b3 lanes.*12 bits"),
    ("lanes-0", dict(dtype=(2, 32, 0)), r"(?i)lanes"),
    ("unknown-device-99", dict(device=(99, 0)), r"(?i)device.*\b99\b"),
    ("device-type-0", dict(device=(0, 0)), r"(?i)device"),
    ("negative-device-id", dict(device=(1, -1)), r"(?i)device"),
    ("null-data-nonzero-size", dict(data=0), r"(?i)NULL data|data is NULL"),
    ("null-shape", dict(null_shape=True), r"(?i)shape is NULL"),
    ("null-shape-1d", dict(ndim=1, strides=[1], null_shape=True), r"(?i)shape is NULL"),
    ("overflowing-shape", dict(shape=[2**62, 4], strides=[4, 1]), r"(?i)overflow"),
    ("overflowing-shape-3d", dict(shape=[2**31, 2**31, 2**31], strides=[1, 1, 1]), r"(?i)overflow"),
    ("stride-span-overflow", dict(shape=[3, 3], strides=[2**62, 2**62]), r"(?i)overflow"),
    ("stride-int64-min", dict(shape=[3, 4], strides=[-(2**63), 1]), r"(?i)overflow|INT64_MIN"),
    ("byte-span-overflow", dict(shape=[2, 4], strides=[2**61, 1]), r"(?i)overflow"),
    ("v1.3-null-strides", dict(version=(1, 3), strides=None), r"(?i)strides are NULL"),
    ("v1.2-null-strides", dict(version=(1, 2), strides=None), r"(?i)strides are NULL"),
    ("address-wrap", dict(data=2**64 - 16), r"(?i)wrap|overflow"),
]


@pytest.mark.parametrize("kw,pattern", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_versioned_raises_and_deletes_once(kw, pattern):
    p = CtypesProducer(_arr(), **kw)
    with pytest.raises(BufferError, match=pattern):
        godlpack.from_dlpack(p)
    assert len(p.records) == 1
    assert p.deleter_calls == 1, "deleter must run exactly once, before from_dlpack returns"
    gc.collect()
    assert p.deleter_calls == 1


@pytest.mark.parametrize("kw,pattern", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_raw_capsule_raises_and_deletes_once(kw, pattern):
    p = CtypesProducer(_arr(), **kw)
    cap = p.capsule(versioned=True)
    with pytest.raises(BufferError, match=pattern):
        godlpack.from_dlpack(cap)
    assert p.deleter_calls == 1
    # ownership was taken (renamed) before the refusal: a second try must not
    # call the deleter again.
    with pytest.raises(BufferError, match="consumed"):
        godlpack.from_dlpack(cap)
    del cap
    gc.collect()
    assert p.deleter_calls == 1


LEGACY_MALFORMED = [m for m in MALFORMED if not any(k in m[0] for k in ("major", "null-strides"))]


@pytest.mark.parametrize(
    "kw,pattern", [m[1:] for m in LEGACY_MALFORMED], ids=[m[0] for m in LEGACY_MALFORMED]
)
def test_malformed_legacy_raises_and_deletes_once(kw, pattern):
    p = CtypesProducer(_arr(), versioned=False, **kw)
    with pytest.raises(BufferError, match=pattern):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


def test_malformed_with_null_deleter_does_not_crash():
    p = CtypesProducer(_arr(), dtype=(99, 8, 1), deleter=False)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 0


def test_future_major_is_refused_even_with_sane_fields():
    # A 2.x layout is unknown: godlpack may not read past the deleter.
    p = CtypesProducer(_arr(), version=(2, 0))
    with pytest.raises(BufferError):
        godlpack.Tensor(p)
    assert p.deleter_calls == 1


# --- accepted edge cases: deleter still exactly once --------------------------------


def _held_then_freed(p, check=None):
    t = godlpack.from_dlpack(p)
    assert p.deleter_calls == 0, "deleter must not run while the Tensor lives"
    if check is not None:
        check(t)
    del t
    gc.collect()
    assert p.deleter_calls == 1


def test_null_data_with_zero_size_is_accepted_and_deleted_once():
    p = CtypesProducer(np.zeros((0, 3), np.float64), data=0, shape=[0, 3], strides=[3, 1])

    def check(t):
        assert t.shape == (0, 3) and t.size == 0 and t.nbytes == 0
        assert t.tolist() == []
        assert np.from_dlpack(t).shape == (0, 3)

    _held_then_freed(p, check)


def test_overflowing_shape_with_a_zero_extent_is_empty_not_an_error():
    p = CtypesProducer(np.zeros(0, np.float32), data=0, shape=[2**62, 0, 2**62], strides=[1, 1, 1])
    def check(t):
        assert t.shape == (2**62, 0, 2**62) and t.size == 0 and t.nbytes == 0

    _held_then_freed(p, check)


@pytest.mark.parametrize("version", [(1, 0), (1, 1)])
def test_pre_1_2_null_strides_mean_compact(version):
    a = _arr()
    p = CtypesProducer(a, version=version, strides=None)

    def check(t):
        assert t.strides == (4, 1)
        assert t.is_contiguous
        np.testing.assert_array_equal(np.from_dlpack(t), a)

    _held_then_freed(p, check)


def test_legacy_null_strides_mean_compact():
    a = _arr()
    p = CtypesProducer(a, versioned=False, strides=None)
    _held_then_freed(p, lambda t: np.testing.assert_array_equal(np.asarray(t), a))


def test_zero_d_with_null_shape_and_strides_is_fine():
    a = np.array(3.5, dtype=np.float64)
    p = CtypesProducer(a, null_shape=True, strides=None, version=(1, 3))
    def check(t):
        assert t.ndim == 0 and t.shape == () and t.strides == ()
        assert t.tolist() == 3.5

    _held_then_freed(p, check)


def test_null_deleter_is_never_called():
    a = _arr()
    p = CtypesProducer(a, deleter=False)
    t = godlpack.from_dlpack(p)
    np.testing.assert_array_equal(np.asarray(t), a)
    del t
    gc.collect()
    assert p.deleter_calls == 0


def test_future_minor_version_is_accepted():
    a = _arr()
    p = CtypesProducer(a, version=(1, 200))
    _held_then_freed(p, lambda t: np.testing.assert_array_equal(np.asarray(t), a))


def test_byte_offset_is_honoured():
    a = np.arange(10, dtype=np.int32)
    p = CtypesProducer(a, shape=[4], strides=[1], byte_offset=8)

    def check(t):
        assert t.data_ptr == a.ctypes.data + 8
        assert t.tolist() == [2, 3, 4, 5]
        assert np.from_dlpack(t).tolist() == [2, 3, 4, 5]

    _held_then_freed(p, check)


# --- sub-byte types -------------------------------------------------------------------------


def test_packed_float4_is_accepted_and_sized_packed():
    packed = np.array([0x21, 0x43, 0x65], dtype=np.uint8)  # 6 float4 values in 3 bytes
    p = CtypesProducer(packed, dtype=(17, 4, 1), shape=[6], strides=[1])

    def check(t):
        assert t.dtype == "float4_e2m1fn"
        assert t.size == 6 and t.nbytes == 3
        c = t.copy()
        assert c.nbytes == 3
        assert bytes((ctypes_u8 * 3).from_address(c.data_ptr)) == packed.tobytes()
        with pytest.raises(TypeError):
            t.tolist()

    _held_then_freed(p, check)


def test_padded_subbyte_is_refused_and_deleted_once():
    # One byte per float4 element: godlpack.Tensor sizes, copies and re-exports
    # assume the packed layout, so a padded one must be refused, not misread.
    p = CtypesProducer(np.arange(6, dtype=np.uint8), dtype=(17, 4, 1), flags=IS_SUBBYTE_TYPE_PADDED)
    with pytest.raises(BufferError, match="(?i)padded"):
        godlpack.from_dlpack(p)
    assert p.deleter_calls == 1


def test_padded_flag_on_byte_types_is_harmless():
    a = np.arange(6, dtype=np.uint8)
    p = CtypesProducer(a, dtype=(10, 8, 1), flags=IS_SUBBYTE_TYPE_PADDED)
    def check(t):
        assert t.dtype == "float8_e4m3fn" and t.nbytes == 6 and t.itemsize == 1

    _held_then_freed(p, check)
