"""godlpack's constructors against NumPy's: for every dtype, bound and byte
order, the same values bit for bit, or a clear exception, never a third
thing. Where NumPy wraps an integer that does not fit (its arange fills by
wrapping arithmetic), godlpack raises OverflowError instead."""
from __future__ import annotations

import ctypes
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import godlpack

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")  # NumPy's own casts

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64", "complex64", "complex128"]
ML_FLOATS = ["bfloat16", "float8_e4m3fn", "float8_e5m2"]


def np_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if name in ML_FLOATS else np.dtype(name)


def as_numpy(t: godlpack.Tensor, name: str) -> np.ndarray:
    if name in ML_FLOATS:  # NumPy's DLPack import has no bfloat16 or float8: read the bytes
        raw = ctypes.string_at(t.data_ptr, t.nbytes) if t.nbytes else b""
        return np.frombuffer(raw, dtype=np_dtype(name)).reshape(t.shape)
    return np.from_dlpack(t)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --- the cases that were silently wrong ----------------------------------------------------------------


@pytest.mark.parametrize("args, dtype", [((0, 1e20, 1e19), "int64"), ((-1.0, 2.0), "uint16"),
                                         ((250.0, 260.0), "uint8"), ((0.0, 3.5e9, 1e9), "int32")])
def test_arange_with_floats_and_an_integer_dtype_raises_instead_of_wrapping(args, dtype):
    with pytest.raises(OverflowError, match=dtype):
        godlpack.arange(*args, dtype=dtype)


@pytest.mark.parametrize("args, dtype", [((0, 10.0, 2.5), "int64"), ((0.5, 5, 1.5), "int8"),
                                         ((-1.5, 1.5, 0.75), "int32"), ((-0.5, 3.0), "uint8"),
                                         ((5.0, 0.0, -1.5), "int16"), ((0, 1.9e19, 9e18), "uint64")])
def test_arange_with_floats_and_an_integer_dtype_gives_numpys_values(args, dtype):
    """NumPy converts the first two elements and steps by their difference:
    arange(0, 10, 2.5, int64) is [0, 2, 4, 6], not [0, 2, 5, 7]."""
    assert same_bits(np.from_dlpack(godlpack.arange(*args, dtype=dtype)), np.arange(*args, dtype=dtype))


@pytest.mark.parametrize("make", [
    lambda d: godlpack.zeros(2, d), lambda d: godlpack.empty(2, d), lambda d: godlpack.full(2, 1.5, d),
    lambda d: godlpack.arange(3, dtype=d), lambda d: godlpack.arange(0.0, 1.0, 0.5, dtype=d)])
@pytest.mark.parametrize("code", [">f4", ">i4", ">c16", ">u2"])
def test_every_constructor_refuses_a_byte_swapped_dtype(make, code):
    with pytest.raises(ValueError, match="byte-swapped"):
        make(np.dtype(code))


@pytest.mark.parametrize("code", ["<f4", "=i4", "|u1", ">u1", "<c16"])
def test_native_and_unordered_dtypes_are_taken(code):
    t = godlpack.full(3, 1, np.dtype(code))
    assert same_bits(np.from_dlpack(t), np.full(3, 1, np.dtype(code).newbyteorder("=")))


# --- properties ----------------------------------------------------------------------------------------

small_ints = st.integers(-(2**40), 2**40)
finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
wide = st.floats(-1e20, 1e20, allow_nan=False, allow_infinity=False)


def _exact_int_elements(start: float, stop: float, step: float) -> list[int] | None:
    """The elements NumPy's integer arange means before wrapping: the first two
    truncated, then steps of their difference (None when it raises first)."""
    n = math.ceil((stop - start) / step)
    if n <= 0:
        return []
    first = int(start)
    if n == 1:
        return [first]
    delta = int(start + step) - first
    return [first + i * delta for i in range(n)]


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INTS), start=st.one_of(finite, wide, small_ints.map(float)),
       span=st.floats(-50, 50, allow_nan=False), count=st.integers(0, 40))
def test_arange_of_floats_is_numpys_or_overflow(dtype, start, span, count):
    step = span / max(count, 1) or 1.0
    stop = start + step * count
    try:
        want = np.arange(start, stop, step, dtype=dtype)
    except (OverflowError, ValueError):
        want = None
    try:
        got = np.from_dlpack(godlpack.arange(start, stop, step, dtype=dtype))
    except OverflowError:
        info = np.iinfo(dtype)
        exact = _exact_int_elements(start, stop, step)
        assert want is None or any(not info.min <= v <= info.max for v in exact), (start, stop, step, want)
        return
    assert want is not None and same_bits(got, want), (start, stop, step, got, want)


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INTS), start=small_ints, stop=small_ints, step=st.integers(-(2**20), 2**20))
def test_arange_of_ints_is_numpys_or_overflow(dtype, start, stop, step):
    if step == 0 or abs((stop - start) // step) > 10_000:
        return
    info = np.iinfo(dtype)
    exact = list(range(start, stop, step))
    try:
        got = np.from_dlpack(godlpack.arange(start, stop, step, dtype=dtype))
    except OverflowError:
        assert any(not info.min <= v <= info.max for v in exact), (start, stop, step)
        return
    assert same_bits(got, np.array(exact, dtype=dtype)), (start, stop, step)


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(FLOATS + ML_FLOATS), start=finite, span=st.floats(-100, 100, allow_nan=False),
       count=st.integers(0, 60))
def test_arange_of_floats_is_numpys_bit_for_bit(dtype, start, span, count):
    step = span / max(count, 1) or 0.5
    stop = start + step * count
    if dtype in ML_FLOATS and abs(start) + abs(stop) > 200:
        return  # float8's range; bfloat16's steps vanish there
    got = as_numpy(godlpack.arange(start, stop, step, dtype=dtype), dtype)
    want = np.arange(start, stop, step, dtype=np_dtype(dtype))
    assert got.shape == want.shape, (start, stop, step)
    assert np.array_equal(got, want, equal_nan=True) and got.tobytes() == want.tobytes(), (start, stop, step, got, want)


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INTS + ["bool"] + FLOATS),
       value=st.one_of(st.integers(-(2**65), 2**65), st.floats(allow_nan=True, allow_infinity=True), st.booleans()))
def test_full_is_numpys_or_overflow(dtype, value):
    try:
        want = np.full(3, value, dtype=dtype)
    except (OverflowError, ValueError):
        want = None
    try:
        got = np.from_dlpack(godlpack.full(3, value, dtype))
    except OverflowError:
        assert want is None or dtype in INTS and isinstance(value, float), (value, want)  # NumPy casts floats
        return
    if want is None:  # NumPy refuses an int beyond C long even for bool; godlpack takes its truth value
        assert dtype == "bool" and isinstance(value, int) and got.tolist() == [bool(value)] * 3, (value, got)
        return
    assert same_bits(got, want), (value, got, want)
