"""Errors a user meets first, and creation values out of range: clear
exceptions of the right class, never wrapped values (issues 12.5, 12.9, 13)."""
import subprocess
import sys

import numpy as np
import pytest

import godlpack
from harness import child_env


@pytest.mark.parametrize(
    "shape, value, dtype",
    [(3, 300, "uint8"), (3, -1, "uint8"), (3, 2**64, "uint64"), (3, 2**70, "int64"), (2, -(2**63) - 1, "int64"),
     (2, 128, "int8"), (2, 1e20, "int32"), (2, float("inf"), "int16"), (2, float("nan"), "int64")],
)
def test_full_refuses_values_the_dtype_cannot_hold(shape, value, dtype):
    with pytest.raises(OverflowError):
        godlpack.full(shape, value, dtype)


@pytest.mark.parametrize(
    "value, dtype, want",
    [(255, "uint8", 255), (-128, "int8", -128), (2**64 - 1, "uint64", 2**64 - 1), (-(2**63), "int64", -(2**63)),
     (2.9, "int32", 2), (-2.9, "int32", -2), (2, "bool", True), (0, "bool", False), (True, "int8", 1)],
)
def test_full_in_range_matches_numpy(value, dtype, want):
    got = godlpack.full(2, value, dtype).tolist()
    assert got == [want, want]
    assert got == np.full(2, value, dtype=dtype).tolist()


def test_arange_refuses_elements_out_of_range():
    with pytest.raises(OverflowError):
        godlpack.arange(250, 260, dtype="uint8")
    with pytest.raises(OverflowError):
        godlpack.arange(-1, 3, dtype="uint16")
    assert godlpack.arange(250, 256, dtype="uint8").tolist() == list(range(250, 256))
    assert godlpack.arange(10, 0, dtype="uint8").tolist() == []  # empty: nothing to hold


def test_shapes_and_dtypes_as_users_write_them():
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints, got float"):
        godlpack.zeros(3.0)
    for dt in (np.float32, np.dtype("int16"), "float32", float, bool):
        t = godlpack.zeros(2, dt)
        assert t.dtype == np.dtype(dt).name
    torch = pytest.importorskip("torch")
    assert godlpack.zeros(2, torch.float32).dtype == "float32"
    assert godlpack.zeros(2, torch.bfloat16).dtype == "bfloat16"
    with pytest.raises(TypeError, match="dtype must be"):
        godlpack.zeros(2, object())


def test_out_of_memory_is_memory_error():
    with pytest.raises(MemoryError):
        godlpack.zeros(10**15, "float64")


def test_help_of_from_dlpack_names_every_keyword():
    doc = godlpack.from_dlpack.__doc__
    for kw in ("device", "copy", "stream"):
        assert kw in doc


def test_subinterpreters_are_refused_with_a_clear_error():
    """Process-wide state (types, caches) must not cross interpreters: the
    import is refused there, and the main interpreter keeps working."""
    code = (
        "import sys, _testcapi, godlpack\n"
        "t = godlpack.zeros(2)\n"
        "r = _testcapi.run_in_subinterp(\n"
        "    'import sys\\n'\n"
        "    'sys.path[:0] = ' + repr(sys.path) + '\\n'\n"
        "    'try:\\n'\n"
        "    '    import godlpack\\n'\n"
        "    '    raise SystemExit(3)\\n'\n"
        "    'except ImportError as e:\\n'\n"
        "    '    assert \"subinterpreter\" in str(e), e\\n')\n"
        "assert r == 0, r\n"
        "assert isinstance(t.device, godlpack.Device) and repr(t).startswith('godlpack.Tensor(')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=child_env())
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_scalar_conversions_of_0d_tensors_work_as_numpys():
    for value, dtype in ((2.5, "float64"), (7, "int32"), (True, "bool"), (3, "uint8")):
        t = godlpack.full((), value, dtype)
        a = np.full((), value, dtype)
        assert float(t) == float(a)
        assert int(t) == int(a)
    assert [10, 20, 30][godlpack.full((), 1, "int64")] == 20  # operator.index
    with pytest.raises(TypeError, match="integer 0-d"):
        [1, 2][godlpack.full((), 1.0, "float32")]
    with pytest.raises(TypeError, match="only 0-d tensors"):
        float(godlpack.zeros(2))
    with pytest.raises(TypeError, match="only 0-d tensors"):
        int(godlpack.zeros((1, 1)))
    assert float(godlpack.full((), 1.5, "bfloat16")) == 1.5
    with pytest.raises(TypeError):
        float(godlpack.full((), 1 + 2j, "complex64"))  # as Python's complex does


@pytest.mark.parametrize("big", [2**40, 2**70, -(2**70)])
def test_out_of_range_ints_get_the_in_range_refusal(big):
    # Every out-of-range value gets the class a merely invalid one gets, not
    # OverflowError for the ones beyond a C long.
    a = np.arange(3.0)
    t = godlpack.from_dlpack(a)
    with pytest.raises(ValueError):
        godlpack.from_dlpack(a, stream=-2)
    with pytest.raises(ValueError):
        godlpack.from_dlpack(a, stream=big if big < 0 else -big)
    with pytest.raises(ValueError):  # no stream handle is that wide
        godlpack.from_dlpack(a, stream=2**64)
    with pytest.raises(BufferError):
        t.__dlpack__(stream=-2)
    with pytest.raises(BufferError):
        t.__dlpack__(stream=big)
    for dev in [(big, 0), (1, big), (big, big)]:
        with pytest.raises(ValueError):
            t.__dlpack__(dl_device=dev)
        with pytest.raises(ValueError):
            godlpack.from_dlpack(a, device=dev)


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (0,), (2,), (2, 0), (3, 1)])
@pytest.mark.parametrize("value,dtype", [(0, "float64"), (2.5, "float32"), (False, "bool"), (True, "bool"),
                                         (0, "uint8"), (-3, "int16"), (0j, "complex64"), (1j, "complex128")])
def test_truth_value_is_numpys(shape, value, dtype):
    # bool(t) was always True: `if t:` took the wrong branch for a zero.
    t, a = godlpack.full(shape, value, dtype), np.full(shape, value, dtype)
    try:
        want = bool(a)
    except ValueError:
        with pytest.raises(ValueError, match="ambiguous"):
            bool(t)
    else:
        assert bool(t) is want


def test_complex_and_index_conversions_are_numpys():
    assert complex(godlpack.full((), 1 + 2j, "complex128")) == 1 + 2j
    assert complex(godlpack.full((), 1.5, "float32")) == 1.5 + 0j
    assert complex(godlpack.full((), 3, "int8")) == 3 + 0j
    with pytest.raises(TypeError, match="only 0-d tensors"):
        complex(godlpack.zeros(2, "complex64"))
    with pytest.raises(TypeError):  # NumPy: a bool is no index
        [1, 2][godlpack.full((), True, "bool")]


def test_numpy_scalars_are_taken_exactly():
    # They went through float64: 2**62 + 1 lost its last bit and a range of
    # three int64 elements near 2**62 came out empty.
    big = 2**62 + 1
    for fill, dtype in [(np.int64(big), "int64"), (np.uint64(2**64 - 2), "uint64"), (np.int8(-5), "int8")]:
        assert godlpack.full(2, fill, dtype).tolist() == np.full(2, fill, dtype).tolist()
    start, stop = np.int64(2**62), np.int64(2**62 + 3)
    assert godlpack.arange(start, stop, dtype="int64").tolist() == np.arange(start, stop, dtype="int64").tolist()
    # ... and their dtype is inferred as NumPy infers it.
    for fill in (np.int64(5), np.int32(5), np.bool_(True), np.float32(0.5), np.complex64(1j)):
        assert godlpack.full(2, fill).dtype == np.full(2, fill).dtype.name
    assert godlpack.arange(np.int64(5)).dtype == "int64"
    with pytest.raises(OverflowError):  # checked like Python ints
        godlpack.full(2, np.int64(300), "uint8")


def test_arange_of_bools_is_refused_as_numpy_does():
    with pytest.raises(TypeError):
        np.arange(5, dtype="bool")
    with pytest.raises(TypeError, match="bool"):
        godlpack.arange(5, dtype="bool")


def test_shapes_are_taken_as_numpy_takes_them():
    for shape in [(np.int64(3),), np.array([2, 3]), np.int32(4), (np.uint8(2), 1)]:
        assert godlpack.zeros(shape).shape == np.zeros(shape).shape
    for shape in [{2: 1}, (True,), 2.0, (2.0,), "2"]:
        with pytest.raises(TypeError):
            godlpack.zeros(shape)
    with pytest.raises(ValueError):  # NumPy: "Maximum allowed dimension exceeded"
        godlpack.zeros((2**63,))


def test_size_of_an_empty_view_whose_other_extents_overflow():
    # shape (2**62, 9, 0): empty, so valid, but 2**62 * 9 overflowed int64
    # (UB, found by UBSan) in Tensor.size/nbytes before the 0 was reached.
    from godlpack import _probe

    cap, _ = _probe.make(True, shape=[2**62, 9, 0], strides=[0, 0, 0], dtype=(2, 32, 1))
    t = godlpack.from_dlpack(cap)
    assert t.shape == (2**62, 9, 0) and t.size == 0 and t.nbytes == 0
