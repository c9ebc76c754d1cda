"""The gopy example against NumPy (and PyTorch where installed).

Build first (./build.sh), then: cd examples/gopy && python -m pytest -q test_vecgopy.py
Never import godlpack here: it would load a second Go runtime.
"""
import os
import sys
import threading

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "build"))
from vecgopy import go, gopydl, vecgopy  # noqa: E402


@pytest.fixture(autouse=True)
def no_leaked_exports():
    """Every Go export made by a test has been deleted by its end."""
    base = vecgopy.LiveExports()
    yield
    assert vecgopy.LiveExports() == base


def test_scale_works_in_place_and_releases_the_array():
    x = np.arange(1000, dtype=np.float32)
    refs = sys.getrefcount(x)
    vecgopy.Scale(gopydl.to_go(x), 2.0)
    np.testing.assert_array_equal(x, 2 * np.arange(1000, dtype=np.float32))
    assert sys.getrefcount(x) == refs  # NumPy's deleter ran exactly once


def test_arange_is_go_memory_shared_with_numpy():
    y = np.from_dlpack(gopydl.from_go(vecgopy.Arange(5)))
    assert vecgopy.LiveExports() >= 1
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4])
    assert y.dtype == np.float32 and y.flags.writeable
    z = np.from_dlpack(y)
    z[0] = 42
    assert np.shares_memory(y, z) and y[0] == 42
    # Go reads back what NumPy wrote: the same memory both ways.
    vecgopy.Scale(gopydl.to_go(y), 0.5)
    assert z[0] == 21
    del y, z


def test_unused_export_is_freed_once():
    base = vecgopy.LiveExports()
    t = gopydl.from_go(vecgopy.Arange(3))
    assert vecgopy.LiveExports() == base + 1
    del t
    assert vecgopy.LiveExports() == base


def test_go_tensor_is_single_use_and_versioned_only():
    t = gopydl.from_go(vecgopy.Arange(3))
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="1.x only"):
        t.__dlpack__()
    with pytest.raises(BufferError, match="copy"):
        t.__dlpack__(max_version=(1, 0), copy=True)
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    a = np.from_dlpack(t)
    with pytest.raises(BufferError, match="single use"):
        np.from_dlpack(t)
    np.testing.assert_array_equal(a, [0, 1, 2])


def test_capsule_destructor_keeps_a_pending_exception():
    """NumPy refuses a capsule it already took (here: a device that differs
    from __dlpack_device__) by setting an error, then drops the capsule:
    gopydl's C destructor frees the tensor and leaves the error alone."""
    import ctypes
    base = vecgopy.LiveExports()
    ptr = vecgopy.Arange(3)
    t = gopydl.from_go(ptr)
    ctypes.c_int32.from_address(ptr + 40).value = 2  # dl_tensor.device_type = CUDA
    # NumPy < 2.5 raises RuntimeError, 2.5 BufferError: either way its own error, not a SystemError.
    with pytest.raises((RuntimeError, BufferError), match="Unsupported device"):
        np.from_dlpack(t)
    assert vecgopy.LiveExports() == base


@pytest.mark.parametrize("bad, match", [
    (np.arange(4, dtype=np.int64), "int64, not float32"),
    (np.ones(8, dtype=np.float32)[::2], "not contiguous"),
    (np.ones(4, dtype=np.float32), "read-only"),
])
def test_refusals_are_buffer_errors_and_release_the_array(bad, match):
    if match == "read-only":
        bad.flags.writeable = False
    refs = sys.getrefcount(bad)
    with pytest.raises(BufferError, match=match):
        gopydl.call(vecgopy.Scale, gopydl.to_go(bad), 2.0)
    assert sys.getrefcount(bad) == refs


def test_without_call_refusals_are_gopy_runtime_errors():
    with pytest.raises(RuntimeError, match="^BufferError: "):
        vecgopy.Scale(gopydl.to_go(np.arange(3)), 2.0)


def test_go_panic_is_a_runtime_error_and_releases_the_array():
    x = np.arange(3, dtype=np.float32)
    refs = sys.getrefcount(x)
    assert vecgopy.At(gopydl.to_go(x), 2) == 2
    with pytest.raises(RuntimeError, match="panic: runtime error: index out of range"):
        vecgopy.At(gopydl.to_go(x), 3)
    assert sys.getrefcount(x) == refs


def test_read_only_input_and_float_result():
    x = np.linspace(0, 1, 101)
    x.flags.writeable = False
    assert vecgopy.Sum(gopydl.to_go(x)) == pytest.approx(x.sum())


def test_to_go_refuses_consumed_capsules_and_non_dlpack_objects():
    cap = np.ones(2, np.float32).__dlpack__(max_version=(1, 0))
    gopydl.free(gopydl.to_go(cap))
    with pytest.raises(BufferError, match="already consumed"):
        gopydl.to_go(cap)
    with pytest.raises(TypeError):
        gopydl.to_go([1.0, 2.0])


def test_legacy_capsules_are_tagged():
    x = np.ones(4, np.float32)
    ptr = gopydl.to_go(x.__dlpack__())  # legacy "dltensor"
    assert ptr & 1
    vecgopy.Scale(ptr, 3.0)
    np.testing.assert_array_equal(x, 3)
    refs = sys.getrefcount(x)
    gopydl.free(gopydl.to_go(x.__dlpack__()))
    assert sys.getrefcount(x) == refs


def test_threads_call_go_with_the_gil_released():
    arrays = [np.ones(100_000, np.float32) for _ in range(8)]

    def work(x):
        for _ in range(20):
            vecgopy.Scale(gopydl.to_go(x), 2.0)

    threads = [threading.Thread(target=work, args=(x,)) for x in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x in arrays:
        np.testing.assert_array_equal(x, 2.0 ** 20)


def test_gopy_slice_path_gives_the_same_result():
    x = np.arange(10, dtype=np.float32)
    s = go.Slice_float32(x.tolist())
    vecgopy.ScaleSlice(s, 2.0)
    np.testing.assert_array_equal(np.array(list(s), np.float32), 2 * x)


def test_torch_in_place_and_back():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float32)
    vecgopy.Scale(gopydl.to_go(t), 3.0)
    assert t.tolist() == [0, 3, 6, 9]
    u = torch.from_dlpack(gopydl.from_go(vecgopy.Arange(4)))
    assert u.tolist() == [0, 1, 2, 3]
    del u
